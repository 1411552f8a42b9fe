import type { Kysely } from "kysely";
import { cancelledWaitingRun, gateOf } from "../../domain/run-gate.js";
import { newId } from "../../domain/ids.js";
import type { Workflow } from "../../domain/workflows.js";
import { runGateWork } from "../run-gate-drivers.js";
import { gateFinishedRuns, releaseFollowersOfHeads, syncWorkflowGate, takeWaiting } from "../run-gate-work.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import type { Database } from "./schema.js";
import { toRunRow } from "./workflow-queries.js";

type RunGateQueries = Pick<Store, "gateStats" | "cancelWaiting" | "releaseGateSlots" | "releaseChainsOf">;

/** The gate of workflows' runs: what waits, and taking a waiting event out of its line. */
export function runGateQueries({ db }: QueryContext): RunGateQueries {
  return {
    async gateStats(ownerId, workflowId, now) {
      const lines = await db
        .selectFrom("run_gate")
        .select(["state", (eb) => eb.fn.countAll<number>().as("count"), (eb) => eb.fn.min("created_at").as("oldest")])
        .where("workflow_id", "=", workflowId)
        .where("owner_id", "=", ownerId)
        .groupBy("state")
        .execute();
      // Admitted under a rate limit, not due yet: pending rows never claimed (a retry's row was, attempts above 0).
      const later = await db
        .selectFrom("deliveries")
        .select([(eb) => eb.fn.countAll<number>().as("count"), (eb) => eb.fn.min("created_at").as("oldest"), (eb) => eb.fn.min("available_at").as("next")])
        .where("listener_id", "=", workflowId)
        .where("owner_id", "=", ownerId)
        .where("status", "=", "pending")
        .where("attempts", "=", 0)
        .where("available_at", ">", now)
        .executeTakeFirst();
      // Followers (taken by a one-at-a-time line's chain, not started or running) are counted as waiting until recorded.
      const waitingLines = lines.filter((line) => line.state === "waiting" || line.state === "following");
      const admitted = lines.find((line) => line.state === "admitted");
      const throttled = Number(later?.count ?? 0);
      const oldest = [...waitingLines.map((line) => line.oldest), throttled > 0 ? later?.oldest : null].filter((value) => value !== null && value !== undefined).map(Number);
      return {
        waiting: waitingLines.reduce((sum, line) => sum + Number(line.count), 0),
        inFlight: Math.max(0, Number(admitted?.count ?? 0) - throttled),
        throttled,
        oldestWaitingSince: oldest.length > 0 ? Math.min(...oldest) : null,
        nextStartAt: throttled > 0 ? Number(later!.next) : null,
      };
    },

    releaseGateSlots(workflowId, keys, now) {
      if (keys.length === 0) return Promise.resolve(0);
      return db.transaction().execute(async (trx) => {
        const admitted = await runGateWork(trx, gateFinishedRuns(keys.map((key) => ({ workflowId, ...key, status: "cancelled" })), now));
        if (admitted.length > 0) await trx.insertInto("deliveries").values(admitted).onConflict((oc) => oc.doNothing()).execute();
        return admitted.length;
      });
    },

    releaseChainsOf(heads, now) {
      // Workflows' deliveries only: nothing else heads a line.
      const workflowHeads = heads.filter((head) => head.listenerId.startsWith("p_")).map((head) => ({ workflowId: head.listenerId, eventId: head.eventId }));
      if (workflowHeads.length === 0) return Promise.resolve(0);
      return db.transaction().execute(async (trx) => {
        const admitted = await runGateWork(trx, releaseFollowersOfHeads(workflowHeads, now));
        if (admitted.length > 0) await trx.insertInto("deliveries").values(admitted).onConflict((oc) => oc.doNothing()).execute();
        return admitted.length;
      });
    },

    cancelWaiting(ownerId, workflowId, eventId, now) {
      return db.transaction().execute(async (trx) => {
        const workflow = await trx.selectFrom("workflows").select(["id"]).where("id", "=", workflowId).where("owner_id", "=", ownerId).executeTakeFirst();
        if (!workflow) return null;
        const waiter = await runGateWork(trx, takeWaiting(workflowId, eventId));
        if (!waiter) return null;
        const triggerEvent = waiter.payload === null ? null : JSON.parse(waiter.payload);
        const run = cancelledWaitingRun({ id: newId("run", now), ownerId, workflowId, emitterId: waiter.emitter_id, eventId: waiter.event_id, triggerEvent }, now);
        // Recorded by its run key: the event never runs now (a delivery of it again records nothing).
        await trx.insertInto("runs").values(toRunRow(run)).onConflict((oc) => oc.doNothing()).execute();
        return run;
      });
    },
  };
}

/**
 * A workflow saved or created, inside its transaction: its gate row follows
 * its settings, and what the new settings let through is admitted
 * (recorded pending: the claimers take it). Nothing for a workflow that
 * never had a gate and has none.
 */
export async function syncGateWithin(trx: Kysely<Database>, workflow: Workflow, now: number): Promise<void> {
  const admitted = await runGateWork(trx, syncWorkflowGate({ id: workflow.id, ownerId: workflow.ownerId }, gateOf(workflow.settings), now));
  if (admitted.length > 0) await trx.insertInto("deliveries").values(admitted).onConflict((oc) => oc.doNothing()).execute();
}
