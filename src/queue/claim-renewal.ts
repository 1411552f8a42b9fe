import type { Logger } from "pino";
import { throttledWarning } from "./throttled-warning.js";

export interface ClaimRenewalOptions {
  /** How long a claim holds from its last renewal. Renewals run every third of it. */
  leaseMs: number;
  /**
   * Renews every claim the instance holds, in one call where the backend
   * allows; answers whether any is still held (false: nothing to renew
   * until the next claim). Claims it could not renew (taken over) are the
   * adapter's to forget: their settle is fenced out all the same.
   */
  renew: () => Promise<boolean>;
  logger: Logger;
}

/**
 * Keeps an instance's claims alive while it holds them: a live holder keeps
 * its jobs however long they run, and a dead one's (or one that closed)
 * run out one lease after its last renewal. The timer runs only while
 * claims are held, so an instance with none (or a queue nobody closes, as
 * the engine's own local queue) costs nothing and keeps no process alive.
 */
export class ClaimRenewal {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** When a claim was last taken or renewed (wall clock): renewals that fail keep being tried for one lease after it, no longer. */
  private heldAt = 0;
  /** Claims taken so far: one taken while a round runs is renewed by the next round. */
  private taken = 0;
  private readonly warn: (error: Error) => void;

  constructor(private readonly options: ClaimRenewalOptions) {
    this.warn = throttledWarning(options.logger, "queue: held claims could not be renewed; they are tried again, and are taken over by another instance if this lasts past their lease");
  }

  /** Renewals between two rounds: a third of the lease leaves two more tries before a claim runs out. */
  get intervalMs(): number {
    return Math.max(100, Math.floor(this.options.leaseMs / 3));
  }

  /** A claim was taken (or adopted): renew from now on, while any is held. */
  held(): void {
    this.heldAt = Date.now();
    this.taken += 1;
    if (this.timer || this.running || this.stopped) return;
    this.schedule();
  }

  /** Renews no more (close): claims not settled run out one lease after their last renewal. Waits for a renewal under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.round(), this.intervalMs);
    // A process with nothing else to do may exit: its claims then run out as a dead one's do.
    this.timer.unref();
  }

  private async round(): Promise<void> {
    this.timer = null;
    const takenBefore = this.taken;
    let again = false;
    const work = this.options.renew().then(
      (stillHeld) => {
        again = stillHeld;
        if (stillHeld) this.heldAt = Date.now();
      },
      (error: unknown) => {
        this.warn(error instanceof Error ? error : new Error(String(error)));
        // Past one lease without a renewal, what was held is lost to its lease anyway: stop until the next claim.
        again = Date.now() - this.heldAt < this.options.leaseMs;
      },
    );
    this.running = work;
    await work;
    this.running = null;
    // A claim taken while this round ran (held() since it started) is renewed by the next one.
    if (!this.stopped && (again || this.taken !== takenBefore)) this.schedule();
  }
}
