import type { Kysely, Migration } from "kysely";

/**
 * Workflows (a trigger subscription and steps) and their runs. A run is keyed
 * by (workflow, emitter, event): the delivery that started it may come again
 * after a crash, and the key makes the second one a no-op.
 */
export const workflowsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("workflows")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("name_slug", "text", (col) => col.notNull())
      .addColumn("active", "integer", (col) => col.notNull())
      .addColumn("trigger_source_id", "text")
      .addColumn("trigger_owned", "integer", (col) => col.notNull())
      .addColumn("trigger_kind", "text", (col) => col.notNull())
      .addColumn("steps", "text", (col) => col.notNull())
      .addColumn("respond", "text", (col) => col.notNull())
      .addColumn("settings", "text", (col) => col.notNull())
      .addColumn("is_error_workflow", "integer", (col) => col.notNull())
      .addColumn("deployment_id", "text", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .addUniqueConstraint("workflows_owner_slug", ["owner_id", "name_slug"])
      .execute();
    await db.schema.createIndex("workflows_owner_id").on("workflows").columns(["owner_id", "id"]).execute();
    await db.schema.createIndex("workflows_trigger").on("workflows").columns(["trigger_source_id"]).execute();

    await db.schema
      .createTable("runs")
      .addColumn("id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("workflow_id", "text", (col) => col.notNull())
      .addColumn("emitter_id", "text", (col) => col.notNull())
      .addColumn("event_id", "text", (col) => col.notNull())
      .addColumn("status", "text", (col) => col.notNull())
      .addColumn("trigger_event", "text", (col) => col.notNull())
      .addColumn("steps", "text", (col) => col.notNull())
      .addColumn("error", "text")
      .addColumn("exit_reason", "text")
      .addColumn("replay_of", "text")
      .addColumn("started_at", "bigint", (col) => col.notNull())
      .addColumn("finished_at", "bigint", (col) => col.notNull())
      .addColumn("duration_ms", "integer", (col) => col.notNull())
      .addUniqueConstraint("runs_key", ["workflow_id", "emitter_id", "event_id"])
      .execute();
    await db.schema.createIndex("runs_workflow").on("runs").columns(["workflow_id", "id"]).execute();

    // A delivery carries its event: retention may trim the event from the log before the listener runs.
    await db.schema.alterTable("deliveries").addColumn("payload", "text").execute();
    await db.schema.alterTable("deliveries").addColumn("indexed_at_ms", "bigint").execute();
  },
};
