import type { Kysely, Migration } from "kysely";

/**
 * Delays, reruns and cancel (issue 19). A run suspended by `$.flow.delay` /
 * `$.flow.rerun` is its row with status `delayed` (its continuation, in the
 * `continuation` column of 0024, says where it resumes); a cancelled run is
 * its row with status `cancelled`, `cancelled_by` naming who cancelled it
 * (a user id, or "cancel_url") and `finished_at` when.
 */
export const runFlowMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("runs").addColumn("cancelled_by", "text").execute();
  },
};
