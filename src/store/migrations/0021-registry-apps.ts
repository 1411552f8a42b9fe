import type { Kysely, Migration } from "kysely";

/**
 * App files published to a user's registry on their own (issue 17): one row
 * per (owner, slug, version), with the app's code and bundle. Apps are not
 * saved components (they are never deployed), so they have a table of their
 * own beside `registry`; the primary key makes a concurrent publish of one
 * version land once.
 */
export const registryAppsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("registry_apps")
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("slug", "text", (col) => col.notNull())
      .addColumn("version", "text", (col) => col.notNull())
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("description", "text")
      .addColumn("code", "text", (col) => col.notNull())
      .addColumn("code_hash", "text", (col) => col.notNull())
      .addColumn("bundle", "text", (col) => col.notNull())
      .addColumn("bundle_hash", "text", (col) => col.notNull())
      .addColumn("bundle_map", "text")
      .addColumn("manifest", "text", (col) => col.notNull())
      .addColumn("published_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("registry_apps_pk", ["owner_id", "slug", "version"])
      .execute();
  },
};
