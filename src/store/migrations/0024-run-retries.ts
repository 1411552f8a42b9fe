import type { Kysely, Migration } from "kysely";

/**
 * Retries of a failed step (issue 19). A run that waits to retry is its row
 * in `runs` with status `retrying`: the row keyed by the run key
 * (workflow, emitter, event) is the continuation, so that every view of runs
 * shows the wait, and the next attempt (in any process) reads the results of
 * the steps before the failed one from it. `attempt`: the run's executions
 * so far (the fence between two claimers of one delivery: a row is replaced
 * only by a later attempt); `attempts`: its failed attempts (JSON);
 * `next_attempt_at`: when the waiting one is due; `continuation`: the sends
 * of the steps that succeeded and the tries per step (JSON), cleared when
 * the run ends.
 */
export const runRetriesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("runs").addColumn("attempt", "integer", (column) => column.notNull().defaultTo(1)).execute();
    await db.schema.alterTable("runs").addColumn("attempts", "text").execute();
    await db.schema.alterTable("runs").addColumn("next_attempt_at", "bigint").execute();
    await db.schema.alterTable("runs").addColumn("continuation", "text").execute();
  },
};
