import type { Kysely, Migration } from "kysely";

/**
 * Webhooks (URLs that subscriptions deliver events to, `wh_…`) and what
 * became of each event sent to one: its attempts, the last answer or error,
 * and whether it was delivered or given up.
 */
export const webhooksMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("webhooks")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text")
      .addColumn("description", "text")
      .addColumn("url", "text", (col) => col.notNull())
      .addColumn("secret", "text", (col) => col.notNull())
      .addColumn("active", "integer", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .execute();
    await db.schema.createIndex("webhooks_owner_id").on("webhooks").columns(["owner_id", "id"]).execute();

    // One row per (webhook, event): the latest attempt's outcome, updated in place.
    await db.schema
      .createTable("webhook_deliveries")
      .addColumn("id", "text", (col) => col.notNull().unique())
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("webhook_id", "text", (col) => col.notNull())
      .addColumn("emitter_id", "text", (col) => col.notNull())
      .addColumn("event_id", "text", (col) => col.notNull())
      .addColumn("channel", "text", (col) => col.notNull())
      .addColumn("status", "text", (col) => col.notNull())
      .addColumn("attempts", "integer", (col) => col.notNull())
      .addColumn("last_status", "integer")
      .addColumn("last_error", "text")
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .addColumn("delivered_at", "bigint")
      .addPrimaryKeyConstraint("webhook_deliveries_pk", ["webhook_id", "emitter_id", "event_id"])
      .execute();
    await db.schema.createIndex("webhook_deliveries_by_webhook").on("webhook_deliveries").columns(["webhook_id", "id"]).execute();
  },
};
