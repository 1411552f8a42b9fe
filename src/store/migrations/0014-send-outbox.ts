import type { Kysely, Migration } from "kysely";

/**
 * The send outbox: each `$.send.*` of a recorded run (but emits, appended
 * with the run), written in the transaction that records the run and
 * removed once carried out or given up. A claimer leases a row as the
 * delivery queue does (status running, available_at the lease's end,
 * claimed_by its instance id); a failed attempt puts it back, due later.
 */
export const sendOutboxMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("send_outbox")
      // The send's idempotency key: <run id>:<step position>:<send position>.
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("workflow_id", "text", (col) => col.notNull())
      .addColumn("run_id", "text", (col) => col.notNull())
      .addColumn("step_index", "integer", (col) => col.notNull())
      .addColumn("send_index", "integer", (col) => col.notNull())
      .addColumn("type", "text", (col) => col.notNull())
      .addColumn("payload", "text", (col) => col.notNull())
      .addColumn("context", "text", (col) => col.notNull())
      .addColumn("status", "text", (col) => col.notNull())
      .addColumn("attempts", "integer", (col) => col.notNull())
      .addColumn("available_at", "bigint", (col) => col.notNull())
      .addColumn("claimed_by", "text")
      .addColumn("last_error", "text")
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .execute();
    await db.schema.createIndex("send_outbox_due").on("send_outbox").columns(["available_at", "created_at"]).execute();
    await db.schema.createIndex("send_outbox_workflow").on("send_outbox").columns(["workflow_id"]).execute();
  },
};
