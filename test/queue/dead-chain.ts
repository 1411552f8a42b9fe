import { expect } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { Workflow } from "../../src/domain/workflows.js";
import type { Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput } from "../store/store-contract.js";

/**
 * A one-at-a-time line whose chain's process died: four events {n: 0..3}
 * to a workflow of concurrency 1; a process ("dead") recorded the first run,
 * which admitted the second (leased to it for 1 ms) with the last two as its
 * followers; then the workflow's concurrency was removed. Resolves once the
 * head's lease has run out.
 */
export async function deadChainWithGateRemoved(store: Store): Promise<Workflow> {
  const ownerId = (await store.createUser(newUserInput())).id;
  const workflow = await store.createWorkflow(workflowFor(ownerId, "line", { settings: { errorNotifications: true, errorRetention: 100, concurrency: 1 } }));
  const emitterId = "dc_emitter0000000000000000000";
  await store.subscribe({ id: newId("subscription"), ownerId, emitterId, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
  await store.appendEvents({ ownerId, emitterId, emits: [0, 1, 2, 3].map((n) => ({ event: { n } })), dedupe: null, retention: 100, now: Date.now() });
  const [first] = (await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 })).filter((row) => row.listenerId === workflow.id);
  const at = Date.now();
  const run = { id: newId("run", at), ownerId, workflowId: workflow.id, emitterId, eventId: first!.eventId, status: "success" as const, triggerEvent: first!.event, steps: [], error: null, exitReason: null, replayOf: null, startedAt: at, finishedAt: at, durationMs: 0 };
  const { admitted } = await store.finishRuns({ runs: [run], deliveries: [first!], appends: [], admitClaim: { claimer: "dead", leaseMs: 1 } });
  expect(admitted?.[0]?.followers?.map((follower) => follower.event)).toEqual([{ n: 2 }, { n: 3 }]);
  const { concurrency: _removed, ...ungated } = workflow.settings;
  await store.updateWorkflow({ ...workflow, settings: ungated });
  await new Promise((resolve) => setTimeout(resolve, 5));
  return workflow;
}
