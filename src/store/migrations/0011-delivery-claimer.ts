import type { Kysely, Migration } from "kysely";

/**
 * Which process (its instance id, kept in its data folder) leased a
 * delivery: a process that starts again can take back at once the
 * deliveries its previous run held, instead of waiting for their leases to
 * run out, without touching those of live peers sharing the database.
 */
export const deliveryClaimerMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("deliveries").addColumn("claimed_by", "text").execute();
  },
};
