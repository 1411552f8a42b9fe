import type { Kysely, Migration } from "kysely";

/**
 * Key-value stores beyond a source's own: each workflow step's `$.service.db`
 * (one row per key, so that concurrent runs of a workflow merge key by key),
 * and the user's named data stores (`data_store` props) with their records.
 * A record's `bytes` (key and JSON value) is kept so that the owner's total
 * can be checked without reading values; `expires_at` (epoch ms) is a TTL.
 */
export const dataStoresMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("step_store_entries")
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("workflow_id", "text", (col) => col.notNull())
      .addColumn("step_id", "text", (col) => col.notNull())
      .addColumn("key", "text", (col) => col.notNull())
      .addColumn("value", "text", (col) => col.notNull())
      .addPrimaryKeyConstraint("step_store_entries_pk", ["workflow_id", "step_id", "key"])
      .execute();

    await db.schema
      .createTable("data_stores")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .addUniqueConstraint("data_stores_owner_name", ["owner_id", "name"])
      .execute();

    await db.schema
      .createTable("data_store_records")
      .addColumn("store_id", "text", (col) => col.notNull().references("data_stores.id").onDelete("cascade"))
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("key", "text", (col) => col.notNull())
      .addColumn("value", "text", (col) => col.notNull())
      .addColumn("bytes", "integer", (col) => col.notNull())
      .addColumn("expires_at", "bigint")
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("data_store_records_pk", ["store_id", "key"])
      .execute();
    await db.schema.createIndex("data_store_records_owner").on("data_store_records").columns(["owner_id"]).execute();
  },
};
