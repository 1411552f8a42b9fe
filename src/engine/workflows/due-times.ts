/**
 * The times at which deliveries this process put back in the queue (a retry
 * after its backoff, a delayed run) fall due. An idle worker sleeps until the
 * earliest of them rather than for its whole poll interval: a retry due in
 * 200 ms ran up to a poll (1 s) late. Times past are dropped as they are
 * read; past `limit` times, the latest are forgotten (the poll still finds
 * those deliveries, only later).
 */
export class DueTimes {
  private times: number[] = [];

  constructor(private readonly limit = 10_000) {}

  /** A delivery falls due at `at` (epoch ms, the queue's clock). */
  add(at: number): void {
    // Sorted insert: the list is short, and read far more often than written.
    let low = 0;
    let high = this.times.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.times[middle]! <= at) low = middle + 1;
      else high = middle;
    }
    this.times.splice(low, 0, at);
    if (this.times.length > this.limit) this.times.length = this.limit;
  }

  /**
   * The earliest time after `seen` (the last look at the queue: times up to
   * it were looked for, and are dropped), or null when none is known. It may
   * be past already: something fell due while the worker was busy.
   */
  next(seen: number): number | null {
    let past = 0;
    while (past < this.times.length && this.times[past]! <= seen) past++;
    if (past > 0) this.times.splice(0, past);
    return this.times[0] ?? null;
  }
}
