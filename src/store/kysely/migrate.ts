import { Migrator, type Kysely } from "kysely";
import { migrationProvider } from "../migrations/index.js";

/** Brings the schema to the latest migration; Kysely's migrator takes a lock, so concurrent starts are safe. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === "Error");
  if (error || failed) {
    const name = failed ? ` "${failed.migrationName}"` : "";
    const reason = error instanceof Error ? error.message : String(error ?? "unknown error");
    throw new Error(`Database migration${name} failed: ${reason}`, { cause: error });
  }
}
