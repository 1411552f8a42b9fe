/**
 * What the console's lists and home page show of what is happening: counts
 * read in one grouped query per page, never one query per item.
 */

/** Events an emitter keeps now, and when the newest was appended (epoch ms; null: none kept). */
export interface EmitterEventStats {
  count: number;
  lastMs: number | null;
}

/** A workflow's newest run (when it started, epoch ms) and its runs and failed runs since a moment. */
export interface WorkflowRunStats {
  lastRunAt: number | null;
  runs: number;
  errors: number;
}

/** Counts of one minute (`minute`: epoch ms / 60 000, floored). */
export interface MinuteCounts {
  minute: number;
  runs: number;
  events: number;
  errors: number;
}

/** A workflow with failed runs in the window. */
export interface FailingWorkflow {
  id: string;
  name: string;
  errors: number;
  /** When the newest failed run finished (epoch ms). */
  lastErrorAt: number;
}

export interface ActivityWindow {
  /** Only the minutes that had something. */
  minutes: MinuteCounts[];
  /** Most failed runs first, up to FAILING_WORKFLOWS_LIMIT. */
  failing: FailingWorkflow[];
}

export const FAILING_WORKFLOWS_LIMIT = 10;
export const ACTIVITY_MAX_MINUTES = 1_440;
const MINUTE_MS = 60_000;

/** The first minute (epoch ms of its start) of a window of `minutes` that ends with the current minute. */
export function windowStart(now: number, minutes: number): number {
  return (Math.floor(now / MINUTE_MS) - minutes + 1) * MINUTE_MS;
}

/** One bucket per minute of the window, oldest first, zeros for the minutes that had nothing. */
export function fillMinutes(now: number, minutes: number, counted: MinuteCounts[]): Array<MinuteCounts & { startMs: number }> {
  const byMinute = new Map(counted.map((counts) => [counts.minute, counts]));
  const first = Math.floor(now / MINUTE_MS) - minutes + 1;
  return Array.from({ length: minutes }, (_, index) => {
    const minute = first + index;
    const found = byMinute.get(minute);
    return { minute, startMs: minute * MINUTE_MS, runs: found?.runs ?? 0, events: found?.events ?? 0, errors: found?.errors ?? 0 };
  });
}
