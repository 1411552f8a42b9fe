import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { toRun } from "./workflow-queries.js";

type RunRetryQueries = Pick<Store, "findRetryingRuns">;

/**
 * The continuations of runs waiting to retry a step: their `retrying` rows in
 * `runs`, read by run key. Asked only for deliveries claimed again (attempts
 * above 1), never on a run's first attempt.
 */
export function runRetryQueries({ db }: QueryContext): RunRetryQueries {
  return {
    async findRetryingRuns(ownerId, workflowId, keys) {
      if (keys.length === 0) return [];
      const rows = await db
        .selectFrom("runs")
        .selectAll()
        .where("workflow_id", "=", workflowId)
        .where("owner_id", "=", ownerId)
        .where("status", "=", "retrying")
        .where((eb) => eb.or(keys.map((key) => eb.and([eb("emitter_id", "=", key.emitterId), eb("event_id", "=", key.eventId)]))))
        .execute();
      return rows.map(toRun);
    },
  };
}
