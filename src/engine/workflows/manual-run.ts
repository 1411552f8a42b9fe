import { newId } from "../../domain/ids.js";
import type { Workflow } from "../../domain/workflows.js";
import type { NewDelivery, Store } from "../../store/store.js";
import { nextBatchMs } from "./error-replay.js";

/** The channel of a manual run's delivery: the run-now control and test runs with a sample event. */
export const MANUAL_RUN_CHANNEL = "$run";

/** What a manual run's delivery carries: the event its steps see as `steps.trigger.event`, and the run's id given in advance. */
export interface ManualRunBody {
  event: unknown;
  run_id: string;
}

/**
 * Queues one run of the workflow on `event`, as a durable delivery like a
 * replay's (it survives a restart, and a retry after a crash does not run it
 * twice). Returns the id the run will have.
 */
export async function enqueueManualRun(store: Store, workflow: Workflow, event: unknown, now: number): Promise<{ runId: string; eventId: string }> {
  const runId = newId("run", now);
  const eventId = `${nextBatchMs(now)}-0`;
  const body: ManualRunBody = { event, run_id: runId };
  await store.enqueueDeliveries([manualRunDelivery(workflow, eventId, body, now)]);
  return { runId, eventId };
}

/** The durable delivery of a manual run: to the listener itself (a workflow, or a source run on a worker), due now. */
export function manualRunDelivery(listener: { id: string; ownerId: string }, eventId: string, body: unknown, now: number): NewDelivery {
  return {
    listenerId: listener.id,
    emitterId: listener.id,
    eventId,
    ownerId: listener.ownerId,
    subscriptionId: "manual",
    channel: MANUAL_RUN_CHANNEL,
    availableAt: now,
    createdAt: now,
    event: body,
    indexedAtMs: now,
  };
}
