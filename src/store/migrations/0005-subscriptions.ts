import type { Kysely, Migration } from "kysely";

/**
 * Subscriptions (an emitter, or a glob of them, and a channel, to a listener)
 * and the deliveries the bus records for them in the transaction that
 * appends the events: durable work for listeners (workflows) to take.
 */
export const subscriptionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("subscriptions")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("emitter_id", "text", (col) => col.notNull())
      .addColumn("listener_id", "text", (col) => col.notNull())
      .addColumn("event_name", "text", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addUniqueConstraint("subscriptions_unique", ["owner_id", "emitter_id", "listener_id", "event_name"])
      .execute();
    await db.schema.createIndex("subscriptions_emitter").on("subscriptions").columns(["owner_id", "emitter_id"]).execute();

    // One row per (listener, event): the key that makes a redelivery run nothing twice.
    await db.schema
      .createTable("deliveries")
      .addColumn("listener_id", "text", (col) => col.notNull())
      .addColumn("emitter_id", "text", (col) => col.notNull())
      .addColumn("event_id", "text", (col) => col.notNull())
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("subscription_id", "text", (col) => col.notNull())
      .addColumn("channel", "text", (col) => col.notNull())
      .addColumn("status", "text", (col) => col.notNull())
      .addColumn("attempts", "integer", (col) => col.notNull().defaultTo(0))
      .addColumn("available_at", "bigint", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("deliveries_pk", ["listener_id", "emitter_id", "event_id"])
      .execute();
    await db.schema.createIndex("deliveries_pending").on("deliveries").columns(["status", "available_at"]).execute();
  },
};
