/**
 * A lane: the calls of one batch, run one after the other, each over the
 * store the previous one left. A runner may have several lanes at once (one
 * per batch the host sent it, of the same or different bundles of its
 * owner): they interleave where their code waits, as concurrent calls do.
 *
 * A lane may hold the endings of its calls (holdEnd) so that the batch
 * answers in one message, one write and one read instead of one per call:
 * the host then has one wake-up per batch rather than per call.
 */
import type { DbSnapshot, RunnerMessage, WireResponse } from "../protocol.js";
import type { ActiveCall } from "./active-call.js";

/**
 * Held endings are sent at the latest when the oldest has waited this long,
 * checked between calls and by a timer (for a call that waits on I/O): it
 * bounds what a runner that dies can take with it.
 */
const HOLD_MS = 5;

export class Lane {
  /** The store as the last call left it, for calls sent together (carryDb). */
  carried: DbSnapshot = {};
  /** Calls run one after the other, in the order they arrived. */
  private queue: Promise<void> = Promise.resolve();
  /** Calls queued and not yet ended. */
  private queued = 0;
  /** Ended calls whose endings wait for the calls behind them, in order, and since when. */
  private held: ActiveCall[] = [];
  private heldSince = 0;
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly send: (message: RunnerMessage<WireResponse>) => void,
    /** The lane has nothing left to run: the runner may forget it. */
    private readonly onDrained: (lane: Lane) => void,
  ) {}

  /** Runs `work` after the calls already queued; `call` is the call's end, for its db and its held ending. */
  enqueue(work: () => Promise<ActiveCall>): void {
    this.queued += 1;
    this.queue = this.queue.then(async () => {
      try {
        const call = await work();
        this.carried = call.db.snapshot();
      } finally {
        this.queued -= 1;
        // The last call of what was sent, or endings held long enough: send them.
        if (this.queued === 0 || performance.now() - this.heldSince >= HOLD_MS) this.sendHeld();
        if (this.queued === 0) this.onDrained(this);
      }
    });
  }

  /** A call of the lane ended: its ending waits for the calls behind it. `now`: send it at once (the runner is about to be replaced). */
  hold(call: ActiveCall, now: boolean): void {
    if (this.held.length === 0) {
      this.heldSince = performance.now();
      this.holdTimer = setTimeout(() => this.sendHeld(), HOLD_MS);
    }
    this.held.push(call);
    if (now) this.sendHeld();
  }

  /** Sends the held endings, in the order the calls ended, as one message. */
  sendHeld(): void {
    if (this.held.length === 0) return;
    clearTimeout(this.holdTimer);
    const messages = this.held.flatMap((call) => call.takePending());
    this.held = [];
    if (messages.length > 0) this.send(messages.length === 1 ? messages[0]! : { type: "batch", messages });
  }
}
