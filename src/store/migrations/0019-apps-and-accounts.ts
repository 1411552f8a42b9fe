import type { Kysely, Migration } from "kysely";

/**
 * Apps and connected accounts (issue 17): apps an admin added (the shipped
 * ones are data in the code), OAuth clients (the secret sealed), each user's
 * connected accounts (`apn_…`, their fields one sealed value), and OAuth
 * connections in progress (under the hash of their one-time state).
 */
export const appsAndAccountsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("apps")
      .addColumn("slug", "text", (col) => col.primaryKey())
      .addColumn("name", "text", (col) => col.notNull())
      // JSON: the AppAuth (URLs, scopes, fields); no secret in it.
      .addColumn("auth", "text", (col) => col.notNull())
      .addColumn("created_by", "text")
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .execute();

    await db.schema
      .createTable("oauth_clients")
      .addColumn("app", "text", (col) => col.primaryKey())
      .addColumn("client_id", "text", (col) => col.notNull())
      .addColumn("client_secret", "text", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .execute();

    await db.schema
      .createTable("app_accounts")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("app", "text", (col) => col.notNull())
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("fields", "text", (col) => col.notNull())
      .addColumn("expires_at", "bigint")
      .addColumn("health", "text", (col) => col.notNull())
      .addColumn("health_message", "text")
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .execute();
    await db.schema.createIndex("app_accounts_owner_id").on("app_accounts").columns(["owner_id", "id"]).execute();

    await db.schema
      .createTable("oauth_flows")
      .addColumn("state_hash", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("app", "text", (col) => col.notNull())
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("account_id", "text")
      .addColumn("verifier", "text", (col) => col.notNull())
      .addColumn("expires_at", "bigint", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .execute();
  },
};
