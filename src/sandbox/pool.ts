/**
 * Which runner serves which call. A runner is tied to one key (owner, bundle,
 * heap size) for life: its read permissions name that bundle's folder, and it
 * keeps the loaded module warm for the key's next call. At most maxRunners
 * processes exist, dying ones included; when all are taken, the least
 * recently used idle runner is stopped to make room, and when none is idle
 * calls wait in arrival order. Idle runners exit after idleMs.
 */
import type { Logger } from "pino";
import type { RunnerProcess } from "./runner-process.js";
import type { SandboxError } from "./sandbox-error.js";

export interface RunnerHooks {
  onExit(runner: RunnerProcess): void;
  onFault(runner: RunnerProcess, error?: SandboxError): void;
}

export interface PoolOptions {
  maxRunners: number;
  idleMs: number;
  logger: Logger | undefined;
}

interface Slot {
  key: string;
  runner: RunnerProcess;
  state: "busy" | "idle" | "stopping";
  lastUsed: number;
  idleTimer: NodeJS.Timeout | undefined;
}

interface Waiter {
  key: string;
  start(hooks: RunnerHooks): RunnerProcess;
  resolve(runner: RunnerProcess): void;
  reject(error: Error): void;
}

export class RunnerPool {
  private readonly options: PoolOptions;
  private readonly slots = new Map<RunnerProcess, Slot>();
  private readonly waiters: Waiter[] = [];
  private closed = false;
  private readonly hooks: RunnerHooks = {
    onExit: (runner) => this.forget(runner),
    onFault: (runner) => {
      const slot = this.slots.get(runner);
      // A busy runner's fault ends its call, which retires it; an idle one is stopped here.
      if (slot?.state === "idle") this.stopSlot(slot, "retire");
    },
  };

  constructor(options: PoolOptions) {
    this.options = options;
  }

  /** A runner for `key`, warm when one is idle; `start` spawns a new one when needed. */
  acquire(key: string, start: (hooks: RunnerHooks) => RunnerProcess): Promise<RunnerProcess> {
    if (this.closed) return Promise.reject(new Error("The sandbox is closed."));
    return new Promise((resolve, reject) => {
      this.waiters.push({ key, start, resolve, reject });
      this.pump();
    });
  }

  /** Hands the runner back after a call; a runner that died or retired is forgotten. */
  release(runner: RunnerProcess): void {
    const slot = this.slots.get(runner);
    if (!slot) return;
    if (!runner.isAlive || this.closed) {
      this.stopSlot(slot, "close");
      return;
    }
    slot.state = "idle";
    slot.lastUsed = performance.now();
    slot.idleTimer = setTimeout(() => this.stopSlot(slot, "idle"), this.options.idleMs);
    slot.idleTimer.unref();
    this.pump();
  }

  /** Stops every runner and waits for them; calls still waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error("The sandbox was closed before the call could start."));
    await Promise.all([...this.slots.values()].map((slot) => this.stopSlot(slot, "close")));
  }

  get size(): number {
    return this.slots.size;
  }

  private pump(): void {
    while (!this.closed && this.waiters.length > 0) {
      const waiter = this.waiters[0] as Waiter;
      const warm = [...this.slots.values()].find((slot) => slot.state === "idle" && slot.key === waiter.key && slot.runner.isAlive);
      if (warm) {
        this.waiters.shift();
        clearTimeout(warm.idleTimer);
        warm.state = "busy";
        waiter.resolve(warm.runner);
        continue;
      }
      if (this.slots.size < this.options.maxRunners) {
        this.waiters.shift();
        const runner = waiter.start(this.hooks);
        this.slots.set(runner, { key: waiter.key, runner, state: "busy", lastUsed: performance.now(), idleTimer: undefined });
        this.options.logger?.debug({ pid: runner.pid, runners: this.slots.size }, "runner started");
        waiter.resolve(runner);
        continue;
      }
      // Full. A runner already stopping frees a place soon; otherwise make room from the idle ones.
      if (![...this.slots.values()].some((slot) => slot.state === "stopping")) {
        const idle = [...this.slots.values()].filter((slot) => slot.state === "idle");
        const oldest = idle.reduce<Slot | undefined>((lru, slot) => (lru && lru.lastUsed <= slot.lastUsed ? lru : slot), undefined);
        if (oldest) this.stopSlot(oldest, "evict");
      }
      return;
    }
  }

  private stopSlot(slot: Slot, reason: "idle" | "evict" | "retire" | "close"): Promise<void> {
    clearTimeout(slot.idleTimer);
    if (slot.state !== "busy" || reason === "close") slot.state = "stopping";
    return slot.runner.stop(reason);
  }

  /** The process is gone: its place is free. */
  private forget(runner: RunnerProcess): void {
    const slot = this.slots.get(runner);
    if (!slot) return;
    clearTimeout(slot.idleTimer);
    this.slots.delete(runner);
    this.options.logger?.debug({ pid: runner.pid, runners: this.slots.size }, "runner gone");
    this.pump();
  }
}
