import { join } from "node:path";
import type { Logger } from "pino";
import type { Store } from "./store.js";

export interface StoreSelection {
  /** `postgres://…` selects PostgreSQL; absent, the embedded SQLite file. */
  databaseUrl: string | null;
  /** PostgreSQL: the most connections the store's pool holds (its default: 10). */
  databasePoolSize?: number;
  dataDir: string;
  /** Where the store reports trouble of its own (the SQLite checkpoint thread). */
  logger?: Logger;
}

export const SQLITE_FILE_NAME = "runnel.sqlite";

/** Opens the store the configuration selects and brings its schema up to date. */
export async function openStore(selection: StoreSelection): Promise<Store> {
  // Each store's driver is loaded only when chosen: a start pays for one of them.
  const store = selection.databaseUrl
    ? (await import("./postgres/postgres-store.js")).createPostgresStore({ connectionString: selection.databaseUrl, maxConnections: selection.databasePoolSize })
    : (await import("./sqlite/sqlite-store.js")).createSqliteStore({ file: join(selection.dataDir, SQLITE_FILE_NAME), ...(selection.logger ? { logger: selection.logger } : {}) });
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}
