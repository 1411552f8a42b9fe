import { newId } from "../../domain/ids.js";
import type { Workflow } from "../../domain/workflows.js";
import type { Store } from "../../store/store.js";
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
  await store.enqueueDeliveries([
    {
      listenerId: workflow.id,
      emitterId: workflow.id,
      eventId,
      ownerId: workflow.ownerId,
      subscriptionId: "manual",
      channel: MANUAL_RUN_CHANNEL,
      availableAt: now,
      createdAt: now,
      event: body,
      indexedAtMs: now,
    },
  ]);
  return { runId, eventId };
}
