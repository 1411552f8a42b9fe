/** What one call may use. */
export interface Limits {
  /** Wall time from handing the call to a started runner (or from its start, for a runner still starting) to its answer; the runner is killed past it. */
  timeoutMs: number;
  /** V8 old-space heap of the runner (--max-old-space-size). */
  memoryMb: number;
  /** Bytes the call may print (console and process.stdout/stderr together). */
  maxLogBytes: number;
}

/**
 * How long a runner may take to start (Node and the runner's own set-up, no
 * user code). Not charged to any call's time limit: a loaded machine can take
 * seconds to start a process, and a component must not fail for that. Past
 * it the runner is stopped and its calls fail, none of their code having run.
 */
export const RUNNER_START_LIMIT_MS = 20_000;

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  timeoutMs: 30_000,
  memoryMb: 256,
  maxLogBytes: 1024 * 1024,
});

/**
 * Log lines a call may print, however short: each line costs the host an
 * object, so a loop of empty console.log() calls must stop somewhere too.
 */
export const MAX_LOG_ENTRIES = 50_000;

export function resolveLimits(partial: Partial<Limits> | undefined): Limits {
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const name of ["timeoutMs", "memoryMb", "maxLogBytes"] as const) {
    const value = partial?.[name];
    if (value !== undefined) limits[name] = value;
  }
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) throw new RangeError(`Sandbox limit ${name} must be a positive integer, got ${String(value)}.`);
  }
  return limits;
}
