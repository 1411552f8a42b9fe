import type { Kysely, Migration } from "kysely";

/** A source's own limits (time per run, heap), over the server's defaults. */
export const sourceLimitsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("sources").addColumn("limits", "text").execute();
  },
};
