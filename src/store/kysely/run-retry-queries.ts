import { WAITING_RUN_STATUSES } from "../../domain/run-flow.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { toRun } from "./workflow-queries.js";
import { toJson } from "./json-columns.js";

type RunRetryQueries = Pick<Store, "findRunsByKey" | "updateWaitingRun" | "hurryDeliveries">;

/**
 * Runs read by run key for deliveries claimed again (attempts above 1), never
 * on a run's first attempt: the continuations of runs waiting to retry a step
 * (their `retrying` and `delayed` rows), and the runs that ended already.
 */
export function runRetryQueries({ db }: QueryContext): RunRetryQueries {
  return {
    async findRunsByKey(ownerId, workflowId, keys) {
      if (keys.length === 0) return [];
      const rows = await db
        .selectFrom("runs")
        .selectAll()
        .where("workflow_id", "=", workflowId)
        .where("owner_id", "=", ownerId)
        .where((eb) => eb.or(keys.map((key) => eb.and([eb("emitter_id", "=", key.emitterId), eb("event_id", "=", key.eventId)]))))
        .execute();
      return rows.map(toRun);
    },

    async updateWaitingRun(ownerId, runId, attempt, change) {
      const set: Record<string, unknown> = {};
      if (change.status !== undefined) set.status = change.status;
      if (change.steps !== undefined) set.steps = toJson(change.steps);
      if (change.continuation !== undefined) set.continuation = change.continuation === null ? null : toJson(change.continuation);
      if (change.nextAttemptAt !== undefined) set.next_attempt_at = change.nextAttemptAt;
      if (change.finishedAt !== undefined) set.finished_at = change.finishedAt;
      if (change.durationMs !== undefined) set.duration_ms = change.durationMs;
      if (change.cancelledBy !== undefined) set.cancelled_by = change.cancelledBy;
      const result = await db
        .updateTable("runs")
        .set(set)
        .where("id", "=", runId)
        .where("owner_id", "=", ownerId)
        .where("attempt", "=", attempt)
        .where("status", "in", [...WAITING_RUN_STATUSES])
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async hurryDeliveries(keys, now) {
      let count = 0;
      for (const key of keys) {
        const result = await db
          .updateTable("deliveries")
          .set({ available_at: now })
          .where("listener_id", "=", key.listenerId)
          .where("emitter_id", "=", key.emitterId)
          .where("event_id", "=", key.eventId)
          .where("status", "=", "pending")
          .where("available_at", ">", now)
          .executeTakeFirst();
        count += Number(result.numUpdatedRows);
      }
      return count;
    },
  };
}
