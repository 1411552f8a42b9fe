import type { Kysely, Migration } from "kysely";

/**
 * The web console's sessions and its one-time sign-in links (`runnel open`),
 * in one table told apart by `kind`. Only a SHA-256 of each token is kept
 * (tokens carry 256 random bits, as API keys do). A session or link belongs
 * to the API key it was made with, so revoking that key ends it.
 */
export const consoleSessionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("sessions")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("kind", "text", (col) => col.notNull())
      .addColumn("token_hash", "text", (col) => col.notNull().unique())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("api_key_id", "text", (col) => col.notNull().references("api_keys.id").onDelete("cascade"))
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("last_seen_at", "bigint", (col) => col.notNull())
      .addColumn("expires_at", "bigint", (col) => col.notNull())
      .addColumn("used_at", "bigint")
      .execute();
    await db.schema.createIndex("sessions_api_key_id").on("sessions").column("api_key_id").execute();
  },
};
