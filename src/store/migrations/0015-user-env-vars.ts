import type { Kysely, Migration } from "kysely";

/**
 * Each user's environment variables (`PUT /v1/env/<NAME>`), which workflow
 * steps receive as prop values (`{{process.env.NAME}}`). A secret one's value
 * is stored sealed with the master key, like a secret prop.
 */
export const userEnvVarsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("env_vars")
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text", (col) => col.notNull())
      .addColumn("value", "text", (col) => col.notNull())
      .addColumn("secret", "integer", (col) => col.notNull())
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addColumn("updated_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("env_vars_pk", ["owner_id", "name"])
      .execute();
  },
};
