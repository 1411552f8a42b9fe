import { sql, type Kysely, type Migration } from "kysely";

/**
 * Workflow versions (issue 19, replay from the failed step). Every save of a
 * workflow keeps an immutable copy of its steps as saved (`workflow_versions`,
 * keyed by workflow and version number; the steps name their saved
 * components, which are never changed in place), the workflow knows its
 * current number (`workflows.version`), and each run records the version it
 * ran (`runs.workflow_version`), so that a failed run can be replayed with the
 * code it ran. Existing workflows start at version 1, a copy of their steps now.
 */
export const workflowVersionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("workflow_versions")
      .addColumn("workflow_id", "text", (col) => col.notNull())
      .addColumn("version", "integer", (col) => col.notNull())
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("deployment_id", "text", (col) => col.notNull())
      .addColumn("steps", "text", (col) => col.notNull())
      .addColumn("saved_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("workflow_versions_key", ["workflow_id", "version"])
      .execute();
    await db.schema.alterTable("workflows").addColumn("version", "integer", (col) => col.notNull().defaultTo(1)).execute();
    await db.schema.alterTable("runs").addColumn("workflow_version", "integer").execute();
    await sql`INSERT INTO workflow_versions (workflow_id, version, owner_id, deployment_id, steps, saved_at)
              SELECT id, 1, owner_id, deployment_id, steps, updated_at FROM workflows`.execute(db);
  },
};
