import type { Kysely, Migration } from "kysely";

/** The package lock of a saved component (JSON), so that the same code deploys the same package versions. */
export const componentLockMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("components").addColumn("lock", "text").execute();
  },
};
