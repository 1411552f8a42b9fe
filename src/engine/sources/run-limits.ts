/** The time and memory limits of a source's calls: the server's defaults, the admin's ceilings, and a source's own. */
import type { SourceLimits } from "../../domain/sources.js";
import type { Limits } from "../../sandbox/limits.js";

/** What started a call; it decides the time limit. */
export type Trigger = "http" | "timer" | "manual" | "hook" | "options" | "subscription";

/** Limits of user code (the hosted service's defaults: 30 s for HTTP, 60 s for timers, 256 MB). */
export interface RunLimits {
  httpTimeoutMs: number;
  runTimeoutMs: number;
  memoryMb: number;
  /** The admin's ceilings on what a source may ask for (RUNNEL_MAX_MEMORY_MB, RUNNEL_MAX_TIMEOUT_SECONDS). */
  maxMemoryMb: number;
  maxTimeoutMs: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { httpTimeoutMs: 30_000, runTimeoutMs: 60_000, memoryMb: 256, maxMemoryMb: 1024, maxTimeoutMs: 300_000 };

/** The limits of a source's calls by trigger: its own where it set them, else the defaults. */
export function limitsByTrigger(defaults: RunLimits, own: SourceLimits | null): (trigger: Trigger) => Limits {
  const timeoutFor = (trigger: Trigger) =>
    own?.timeoutSeconds ? own.timeoutSeconds * 1000 : trigger === "http" || trigger === "options" ? defaults.httpTimeoutMs : defaults.runTimeoutMs;
  // One limits object per trigger, shared by the calls of the batch (the sandbox resolves each object once).
  const byTrigger = new Map<Trigger, Limits>();
  return (trigger: Trigger): Limits => {
    let limits = byTrigger.get(trigger);
    if (!limits) {
      limits = { timeoutMs: timeoutFor(trigger), memoryMb: own?.memoryMb ?? defaults.memoryMb, maxLogBytes: 1024 * 1024 };
      byTrigger.set(trigger, limits);
    }
    return limits;
  };
}
