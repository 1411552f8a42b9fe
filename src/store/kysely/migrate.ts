import { Migrator, type Kysely } from "kysely";
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

/** The names of the migrations not applied yet (readiness: a process must not serve a schema older than its code). */
export async function pendingMigrationNames(db: Kysely<any>, schema?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
  return (await migrator.getMigrations()).filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
