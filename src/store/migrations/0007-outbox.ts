import type { Kysely, Migration } from "kysely";

/**
 * The outbox (every mail Runnel sends, recorded before delivery, with its
 * status) and the error notices claimed per day, which hold a workflow's
 * error mails to one per error code per day.
 */
export const outboxMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("outbox")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("to_address", "text")
      .addColumn("subject", "text", (col) => col.notNull())
      .addColumn("text_body", "text", (col) => col.notNull())
      .addColumn("html_body", "text")
      .addColumn("kind", "text", (col) => col.notNull())
      .addColumn("workflow_id", "text")
      .addColumn("status", "text", (col) => col.notNull())
      .addColumn("error", "text")
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("sent_at", "bigint")
      .execute();
    await db.schema.createIndex("outbox_owner_id").on("outbox").columns(["owner_id", "id"]).execute();

    // The key is the rule: one notice per (owner, workflow, error code, UTC day).
    await db.schema
      .createTable("error_notices")
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("workflow_id", "text", (col) => col.notNull())
      .addColumn("code", "text", (col) => col.notNull())
      .addColumn("day", "text", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("error_notices_pk", ["owner_id", "workflow_id", "code", "day"])
      .execute();
  },
};
