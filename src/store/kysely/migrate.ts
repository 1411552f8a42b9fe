import { DEFAULT_MIGRATION_TABLE, Migrator, sql, type Kysely } from "kysely";
import { migrationProvider } from "../migrations/index.js";

/**
 * Brings the schema to the latest migration; Kysely's migrator takes a lock,
 * so concurrent starts are safe. `schema` (PostgreSQL): where the tables
 * are. Without it Kysely looks for its bookkeeping tables in every schema it
 * can see, finds another schema's (another store on the same database, a
 * test's), skips creating its own, and fails on the first query of them.
 */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === "Error");
  if (error || failed) {
    const name = failed ? ` "${failed.migrationName}"` : "";
    const reason = error instanceof Error ? error.message : String(error ?? "unknown error");
    throw new Error(`Database migration${name} failed: ${reason}`, { cause: error });
  }
}

/**
 * The names of the migrations not applied yet (readiness: a process must not
 * serve a schema older than its code). Reads Kysely's migration table
 * directly: its migrator's own getMigrations() introspects every table and
 * column of the database first, far too much for a probe every few seconds.
 */
export async function pendingMigrationNames(db: Kysely<any>, schema?: string): Promise<string[]> {
  const known = Object.keys(await migrationProvider.getMigrations());
  const scoped = schema ? db.withSchema(schema) : db;
  let applied: Set<string>;
  try {
    applied = new Set((await scoped.selectFrom(DEFAULT_MIGRATION_TABLE).select("name").execute()).map((row: { name: string }) => row.name));
  } catch (error) {
    // No migration table yet (nothing applied) is an answer; a store that does not answer is not.
    await sql`SELECT 1`.execute(db);
    if (error instanceof Error && /no such table|does not exist/i.test(error.message)) return known;
    throw error;
  }
  return known.filter((name) => !applied.has(name));
}
