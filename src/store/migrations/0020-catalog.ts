import type { Kysely, Migration } from "kysely";

/**
 * Runnel's own catalog of components (issue 20), published at start-up into
 * every installation and seen by every user beside their own registry. It is
 * nobody's: rows have no owner, and a user who deploys one gets a copy among
 * their own components. (key, version) is the primary key: versions never
 * change, and processes publishing at once insert each version once.
 */
export const catalogMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("catalog_components")
      .addColumn("key", "text", (col) => col.notNull())
      .addColumn("version", "text", (col) => col.notNull())
      .addColumn("kind", "text", (col) => col.notNull())
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("description", "text")
      // Where it came from in catalog/, for log lines and the generated docs.
      .addColumn("path", "text", (col) => col.notNull())
      .addColumn("code", "text", (col) => col.notNull())
      .addColumn("code_hash", "text", (col) => col.notNull())
      .addColumn("bundle", "text", (col) => col.notNull())
      .addColumn("bundle_hash", "text", (col) => col.notNull())
      .addColumn("bundle_map", "text")
      .addColumn("manifest", "text", (col) => col.notNull())
      .addColumn("published_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("catalog_components_pk", ["key", "version"])
      .execute();
  },
};
