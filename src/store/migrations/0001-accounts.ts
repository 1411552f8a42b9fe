import type { Kysely, Migration } from "kysely";

/** Users and their API keys. */
export const accountsMigration: Migration = {
  // Migrations see the database as it was when they were written, not today's types.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("users")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("username", "text", (col) => col.notNull().unique())
      .addColumn("email", "text")
      .addColumn("is_admin", "integer", (col) => col.notNull().defaultTo(0))
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .execute();

    await db.schema
      .createTable("api_keys")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("hash", "text", (col) => col.notNull().unique())
      .addColumn("prefix", "text", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("last_used_at", "bigint")
      .addColumn("revoked_at", "bigint")
      .execute();

    await db.schema.createIndex("api_keys_owner_id").on("api_keys").columns(["owner_id", "id"]).execute();
  },
};
