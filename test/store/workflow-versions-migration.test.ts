import { Kysely, Migrator, SqliteDialect } from "kysely";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { migrationProvider } from "../../src/store/migrations/index.js";
import { CurrentSchemaPostgresDialect } from "../../src/store/postgres/current-schema-dialect.js";
import { SqliteDatabaseClass } from "../../src/store/sqlite/sqlite-binding.js";
import { createTestSchema } from "../helpers/postgres.js";

/**
 * Migration 0027 on a database that already has workflows and runs: each
 * workflow gets version 1 (a copy of its steps now, under its deployment id),
 * `workflows.version` 1, and the runs recorded before no version. SQLite and
 * PostgreSQL, from the schema of 0024 with rows in it.
 */

interface Backend {
  db: Kysely<any>;
  schema?: string;
  close(): Promise<void>;
}

const BACKENDS: Array<[string, () => Promise<Backend>]> = [
  ["SQLite", async () => ({ db: new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabaseClass(":memory:") }) }), close: async () => undefined })],
  [
    "PostgreSQL",
    async () => {
      const schema = await createTestSchema("runnel_versions_migration");
      const pool = new pg.Pool({ connectionString: schema.databaseUrl, max: 2 });
      // The store's own dialect: the stock one's introspection reads every schema, and fails when another test file
      // drops one meanwhile (test/store/postgres-store.test.ts churns them; a CI run failed on it).
      const db = new Kysely<any>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
      return { db, schema: schema.schema, close: async () => (await db.destroy(), await schema.drop()) };
    },
  ],
];

describe.each(BACKENDS)("migration 0027-workflow-versions (%s)", (_name, open) => {
  let backend: Backend | undefined;
  afterEach(async () => {
    await backend?.close();
    backend = undefined;
  });

  it("gives every existing workflow version 1, a copy of its steps, and leaves runs without a version", async () => {
    backend = await open();
    const { db } = backend;
    const migrator = new Migrator({ db, provider: migrationProvider, ...(backend.schema ? { migrationTableSchema: backend.schema } : {}) });
    expect((await migrator.migrateTo("0024-run-retries")).error).toBeUndefined();
    await db.insertInto("users").values({ id: "u_1", username: "old", email: null, is_admin: 0, created_at: 1 }).execute();
    const steps = JSON.stringify([{ id: "c_1", name: "a", componentId: "sc_1", key: null, props: {} }]);
    await db
      .insertInto("workflows")
      .values({ id: "p_1", owner_id: "u_1", name: "Old", name_slug: "old", active: 1, trigger_source_id: null, trigger_owned: 0, trigger_kind: "none", steps, respond: "immediately", settings: "{}", is_error_workflow: 0, deployment_id: "d_1", created_at: 1, updated_at: 5 })
      .execute();
    await db
      .insertInto("runs")
      .values({ id: "run_1", owner_id: "u_1", workflow_id: "p_1", emitter_id: "p_1", event_id: "1-0", status: "success", trigger_event: "{}", steps: "[]", error: null, exit_reason: null, replay_of: null, started_at: 1, finished_at: 2, duration_ms: 1 })
      .execute();

    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const versions = await db.selectFrom("workflow_versions").selectAll().execute();
    expect(versions.map((row) => ({ ...row, version: Number(row.version), saved_at: Number(row.saved_at) }))).toEqual([
      { workflow_id: "p_1", version: 1, owner_id: "u_1", deployment_id: "d_1", steps, saved_at: 5 },
    ]);
    expect(Number((await db.selectFrom("workflows").select("version").executeTakeFirstOrThrow()).version)).toBe(1);
    expect((await db.selectFrom("runs").select("workflow_version").executeTakeFirstOrThrow()).workflow_version).toBeNull();
  });
});
