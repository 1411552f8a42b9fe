import type { Kysely, Migration } from "kysely";

/**
 * The user's component registry: one row per published (owner, key, version),
 * pointing at the saved component it is. Versions are immutable, so the
 * primary key is what makes a concurrent publish of the same version land once.
 */
export const registryMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("registry")
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("key", "text", (col) => col.notNull())
      .addColumn("version", "text", (col) => col.notNull())
      .addColumn("component_id", "text", (col) => col.notNull().references("components.id").onDelete("cascade"))
      .addColumn("kind", "text", (col) => col.notNull())
      .addColumn("published_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("registry_pk", ["owner_id", "key", "version"])
      .execute();
    await db.schema.createIndex("registry_owner_key").on("registry").columns(["owner_id", "key"]).execute();
  },
};
