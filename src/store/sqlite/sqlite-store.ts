import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createKyselyStore } from "../kysely/kysely-store.js";
import type { Database } from "../kysely/schema.js";
import type { Store } from "../store.js";

export interface SqliteStoreOptions {
  /** Path of the database file; its folder is created when missing. */
  file: string;
}

/** The embedded store: one SQLite file in WAL mode, no set-up. */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
  const database = new SqliteDatabase(options.file);
  // WAL lets readers go on while one writer commits; NORMAL sync is durable across
  // process crashes in WAL mode and much faster than FULL.
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  database.pragma("busy_timeout = 5000");

  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return createKyselyStore({ kind: "sqlite", db, isUniqueViolation });
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
