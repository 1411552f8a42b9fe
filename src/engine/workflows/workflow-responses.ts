import type { HttpResponse } from "../../sandbox/http-response.js";

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
 * Meets an HTTP caller and the workflow run its request triggered: the run
 * calls `$.respond` (or ends) in the worker, the caller waits in the endpoint.
 * Either may come first, so an early answer is held until the caller asks.
 * Keyed by the trigger event (emitter, event id). In-process: a scale-out
 * cluster would carry answers over pub/sub.
 */
export class WorkflowResponses {
  private readonly slots = new Map<string, Slot>();
  private early = 0;

  /** The run's answer; the first one for an event wins, later ones are ignored. */
  settle(emitterId: string, eventId: string, end: RunEnd): void {
    const key = `${emitterId} ${eventId}`;
    const slot = this.slots.get(key);
    if (slot?.settle) {
      this.slots.delete(key);
      clearTimeout(slot.timer);
      slot.settle(end);
    } else if (!slot && this.early < MAX_EARLY) {
      this.early += 1;
      const timer = setTimeout(() => {
        if (this.slots.get(key)?.early) this.early -= 1;
        this.slots.delete(key);
      }, HOLD_MS);
      timer.unref();
      this.slots.set(key, { early: end, timer });
    }
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
