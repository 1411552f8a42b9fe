/**
 * The sleep of a polling loop (a worker, a relay, an outbox) that news cuts
 * short. A wake that comes while the loop is busy is remembered, so the loop
 * looks again at once instead of sleeping through it.
 */
export class WakeSignal {
  private woken = false;
  private cut: (() => void) | null = null;

  /** There is news: the loop looks now (or, if busy, once more when done). */
  wake(): void {
    this.woken = true;
    this.interrupt();
  }

  /** Ends a sleep without news (the loop is stopping). */
  interrupt(): void {
    const cut = this.cut;
    this.cut = null;
    cut?.();
  }

  /** Forgets the news so far: the loop is about to look. */
  clear(): void {
    this.woken = false;
  }

  /** Whether news came since the last `clear`. */
  get pending(): boolean {
    return this.woken;
  }

  /** Resolves after `ms`, or at once on a wake or interrupt; true when the time ran out. */
  sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.cut = null;
        resolve(true);
      }, ms);
      this.cut = () => {
        clearTimeout(timer);
        resolve(false);
      };
    });
  }
}
