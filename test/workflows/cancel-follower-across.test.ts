import pino from "pino";
import { describe, expect, it } from "vitest";
import type { HubMessage, LiveTransport } from "../../src/engine/event-hub.js";
import { RunControl } from "../../src/engine/workflows/run-control.js";
import type { WorkflowRun } from "../../src/domain/workflows.js";
import type { Store } from "../../src/store/store.js";

/**
 * A cancel of an event waiting at a gate that a one-at-a-time line's chain
 * holds as a follower, in a cluster: the process asked (an api process)
 * does not hold it, so it asks the others on the cancel channel, and the one
 * whose chain holds it cancels it there and answers with the run its chain
 * will record. The channel here is in memory, between two RunControls as two
 * processes have them (the Redis and PostgreSQL transports carry the same
 * messages; test/scale runs them).
 */
function memoryTransport(): LiveTransport {
  const listeners = new Map<string, Set<(message: HubMessage) => void>>();
  return {
    async publish(channel, message) {
      // As over a wire: later, and a copy.
      const copy = JSON.parse(JSON.stringify(message)) as HubMessage;
      setImmediate(() => {
        for (const listener of listeners.get(channel) ?? []) listener(copy);
      });
    },
    async subscribe(channel, listener) {
      const set = listeners.get(channel) ?? new Set();
      listeners.set(channel, set);
      set.add(listener);
      return async () => void set.delete(listener);
    },
  };
}

const logger = pino({ level: "silent" });

function controlOf(across: LiveTransport, held: Map<string, WorkflowRun>): RunControl {
  return new RunControl({
    // Not reached by a follower's cancel: it is the chain's, not the store's.
    store: {} as Store,
    queue: { hurry: async () => 0 },
    executor: {
      cancelInProgress: () => false,
      cancelQueuedFollower: (ownerId, workflowId, eventId) => {
        const run = held.get(eventId);
        if (!run || run.ownerId !== ownerId || run.workflowId !== workflowId) return null;
        held.delete(eventId);
        return run;
      },
    },
    across,
    onHurried: () => undefined,
    logger,
  });
}

describe("a cancel of a follower held by another process's chain", () => {
  it("is answered by the process whose chain holds it, with the run it will record; nobody holding it is a null", async () => {
    const across = memoryTransport();
    const run: WorkflowRun = { id: "run_follower", ownerId: "u_1", workflowId: "p_line", emitterId: "dc_1", eventId: "e_7", status: "cancelled", triggerEvent: { n: 7 }, steps: [], error: null, exitReason: null, replayOf: null, startedAt: 1, finishedAt: 1, durationMs: 0 };
    const other: WorkflowRun = { ...run, id: "run_other", eventId: "e_8" };
    const worker = controlOf(across, new Map([["e_7", run], ["e_8", other]]));
    const stopListening = await worker.listen();
    const api = controlOf(across, new Map());
    try {
      expect(await api.cancelFollower("u_1", "p_line", "e_7", "u_1")).toEqual(run);
      // Cancelled once: no chain holds it unstarted any more.
      expect(await api.cancelFollower("u_1", "p_line", "e_7", "u_1")).toBeNull();
      // Another owner asking for it finds nothing; its owner then does.
      expect(await api.cancelFollower("u_2", "p_line", "e_8", "u_2")).toBeNull();
      expect(await api.cancelFollower("u_1", "p_line", "e_8", "u_1")).toEqual(other);
    } finally {
      await stopListening();
    }
  });
});
