/**
 * Due times a late timer tick passed over.
 *
 * BullMQ's job schedulers do not backfill: when a worker takes a tick's job
 * more than one interval late (the worker that held the wake-up was killed,
 * the machine is loaded), the scheduler's next job is the first due time
 * after now, and the ones between are never made. The tick's holder makes
 * them instead, once each, named by their due time.
 *
 * Past a bound, the lateness means no worker ran at all (the installation
 * was stopped): those due times collapse into the tick that ran, as the
 * embedded server runs a tick missed while it was down once at start.
 */

/** Missed due times run late at most; more than this many missed run none of them. */
export const CATCH_UP_LIMIT = 10;

export type SkippedDueTimes =
  | { kind: "none" }
  | { kind: "catch-up"; dueTimes: number[] }
  /** More than CATCH_UP_LIMIT were missed: counted up to the bound only (`atLeast`). */
  | { kind: "collapsed"; atLeast: number };

/**
 * The due times strictly between the tick that ran (`dueAt`) and the
 * scheduler's next one (`next`), by the schedule's own step (`after`:
 * the due time after a given one).
 */
export function skippedDueTimes(dueAt: number, next: number, after: (dueTime: number) => number | undefined, limit = CATCH_UP_LIMIT): SkippedDueTimes {
  const dueTimes: number[] = [];
  // Each due time must be after the one before it: a step that does not move ends the walk instead of looping.
  for (let previous = dueAt, dueTime = after(previous); dueTime !== undefined && dueTime > previous && dueTime < next; previous = dueTime, dueTime = after(previous)) {
    if (dueTimes.length === limit) return { kind: "collapsed", atLeast: limit + 1 };
    dueTimes.push(dueTime);
  }
  return dueTimes.length === 0 ? { kind: "none" } : { kind: "catch-up", dueTimes };
}
