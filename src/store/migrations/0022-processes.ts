import type { Kysely, Migration } from "kysely";

/**
 * The process registry (issue 18, operations): one row per server process of
 * the installation, written at start, beaten every few seconds and removed on
 * a graceful stop. A row whose beat grew old is a process that died without
 * saying goodbye (shown as lost, never removed by others: an operator may
 * want to see it). The load columns are what the process last reported.
 */
export const processesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("processes")
      .addColumn("instance_id", "text", (col) => col.primaryKey())
      .addColumn("role", "text", (col) => col.notNull())
      .addColumn("version", "text", (col) => col.notNull())
      .addColumn("host", "text", (col) => col.notNull())
      .addColumn("pid", "integer", (col) => col.notNull())
      .addColumn("url", "text")
      .addColumn("started_at", "bigint", (col) => col.notNull())
      .addColumn("heartbeat_at", "bigint", (col) => col.notNull())
      .addColumn("heartbeat_interval_ms", "integer", (col) => col.notNull())
      .addColumn("busy_runners", "integer", (col) => col.notNull().defaultTo(0))
      .addColumn("queued_deliveries", "integer", (col) => col.notNull().defaultTo(0))
      .execute();
  },
};
