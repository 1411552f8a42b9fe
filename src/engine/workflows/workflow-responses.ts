import type { HttpResponse } from "../../sandbox/http-response.js";
import { ChurningMap } from "../../domain/churning-map.js";

/**
 * How a run that an HTTP caller waits on ended: its `$.respond`, or how it
 * ended without one. The latter names the workflow and the failed step and
 * gives the run's id, never the error's message or stack: the caller is
 * anonymous, the owner finds the details under that id.
 */
export type RunEnd =
  | { kind: "response"; response: HttpResponse }
  | { kind: "ended"; status: "success" | "exited" | "error"; runId: string; workflowName: string; stepName: string | null };

interface Slot {
  settle?: (end: RunEnd) => void;
  early?: RunEnd;
  timer: NodeJS.Timeout;
}

/**
 * How long an answer that came before its caller is kept. The caller asks
 * right after its event is stored, so seconds are plenty; answers of runs
 * that nobody waits for (a source that answers its callers itself) must not
 * pile up. At most MAX_EARLY are kept at once.
 */
const HOLD_MS = 10_000;
const MAX_EARLY = 10_000;
/**
 * How long an answer heard from another process is held. Every process
 * hears every answer and most are other processes' callers', so they are
 * let go sooner: the caller asks within milliseconds of its event's append.
 */
const RECEIVED_HOLD_MS = 3_000;

/**
 * Meets an HTTP caller and the workflow run its request triggered: the run
 * calls `$.respond` (or ends) in the worker, the caller waits in the endpoint.
 * Either may come first, so an early answer is held until the caller asks.
 * Keyed by the trigger event (emitter, event id). Across processes (an api
 * process holds the request, a worker runs it) answers travel over the
 * queue's live messages (answers-across-processes.ts).
 */
export class WorkflowResponses {
  private readonly slots = new ChurningMap<string, Slot>();
  private early = 0;

  /**
   * Where answers whose caller is not waiting here go: set when processes
   * share a queue (the caller may wait in another process). Null: one
   * process, so an answer with no caller yet is held for it.
   */
  private elsewhere: ((emitterId: string, eventId: string, end: RunEnd) => void) | null = null;

  /** Answers nobody here waits for are handed to `send` (to other processes) instead of being held here. */
  sendElsewhere(send: (emitterId: string, eventId: string, end: RunEnd) => void): void {
    this.elsewhere = send;
  }

  /** The run's answer; the first one for an event wins, later ones are ignored. */
  settle(emitterId: string, eventId: string, end: RunEnd): void {
    const key = `${emitterId} ${eventId}`;
    const slot = this.slots.get(key);
    if (slot?.settle) this.answerWaiting(key, slot, end);
    else if (slot) return;
    // Another process may hold the caller; the message comes back here too, and is held then if the caller is ours.
    else if (this.elsewhere) this.elsewhere(emitterId, eventId, end);
    else this.holdEarly(key, end, HOLD_MS);
  }

  /**
   * An answer from another process (every process hears every one): its
   * caller's, when it waits here; else held a short while, in case the
   * caller is here and has not asked yet.
   */
  receive(emitterId: string, eventId: string, end: RunEnd): void {
    const key = `${emitterId} ${eventId}`;
    const slot = this.slots.get(key);
    if (slot?.settle) this.answerWaiting(key, slot, end);
    else if (!slot) this.holdEarly(key, end, RECEIVED_HOLD_MS);
  }

  private answerWaiting(key: string, slot: Slot, end: RunEnd): void {
    this.slots.delete(key);
    clearTimeout(slot.timer);
    slot.settle!(end);
  }

  private holdEarly(key: string, end: RunEnd, holdMs: number): void {
    if (this.early >= MAX_EARLY) return;
    this.early += 1;
    const timer = setTimeout(() => {
      if (this.slots.get(key)?.early) this.early -= 1;
      this.slots.delete(key);
    }, holdMs);
    timer.unref();
    this.slots.set(key, { early: end, timer });
  }

  /** Waits for the answer to the run of this event, at most `timeoutMs`. */
  wait(emitterId: string, eventId: string, timeoutMs: number): Promise<RunEnd | null> {
    const key = `${emitterId} ${eventId}`;
    const slot = this.slots.get(key);
    if (slot?.early) {
      this.early -= 1;
      this.slots.delete(key);
      clearTimeout(slot.timer);
      return Promise.resolve(slot.early);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.slots.delete(key);
        resolve(null);
      }, timeoutMs);
      timer.unref();
      this.slots.set(key, { settle: resolve, timer });
    });
  }
}
