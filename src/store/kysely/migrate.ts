import { Migrator, type Kysely } from "kysely";
import { migrationProvider } from "../migrations/index.js";

/**
 * Brings the schema to the latest migration; Kysely's migrator takes a lock, so concurrent starts are safe.
 * `migrationTableSchema` is where its own tables live: without it Kysely takes a table of that name in any
 * schema of the database for ours (see postgres-store.ts).
 */
export async function migrateToLatest(db: Kysely<any>, migrationTableSchema?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === "Error");
  if (error || failed) {
    const name = failed ? ` "${failed.migrationName}"` : "";
    const reason = error instanceof Error ? error.message : String(error ?? "unknown error");
    throw new Error(`Database migration${name} failed: ${reason}`, { cause: error });
  }
}
