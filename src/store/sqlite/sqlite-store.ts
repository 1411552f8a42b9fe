import type SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { mkdirSync } from "node:fs";
import type { Logger } from "pino";
import { dirname } from "node:path";
import { createKyselyStore } from "../kysely/kysely-store.js";
import type { Database } from "../kysely/schema.js";
import type { Store } from "../store.js";
import { createSqliteAppender } from "./sqlite-append.js";
import { GroupCommit } from "./group-commit.js";
import { SqliteDatabaseClass } from "./sqlite-binding.js";
import { createSqliteRuns } from "./sqlite-runs.js";
import { WalCheckpointer } from "./wal-checkpointer.js";

export interface SqliteStoreOptions {
  /** Path of the database file; its folder is created when missing. */
  file: string;
  /** Where the checkpoint thread says it failed. */
  logger?: Logger;
}

/** The embedded store: one SQLite file in WAL mode, no set-up. */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
  const database = new SqliteDatabaseClass(options.file);
  // WAL lets readers go on while one writer commits; NORMAL sync is durable across
  // process crashes in WAL mode and much faster than FULL.
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  database.pragma("busy_timeout = 5000");
  // Checkpoints off the server's thread (see wal-checkpointer.ts); an in-memory database has no log.
  const checkpointer = options.file === ":memory:" ? null : new WalCheckpointer(database, options.file, options.logger);

  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  const store = createKyselyStore({ kind: "sqlite", db, isUniqueViolation });
  // Prepared once migrations have made the tables; see sqlite-append.ts for why it bypasses Kysely.
  let fast: (Pick<Store, "appendEvents" | "claimDeliveries" | "finishRuns">) | null = null;
  return {
    ...store,
    groupsWritesByTurn: true,
    async close() {
      // The thread's connection first: the server's, closed last, checkpoints what is left and removes the log.
      await checkpointer?.stop();
      await store.close();
    },
    async migrate() {
      await store.migrate();
      const group = new GroupCommit(database, db, checkpointer?.turns);
      const appender = createSqliteAppender(database, group);
      fast = { appendEvents: appender.append, ...createSqliteRuns(database, group, appender.appendInTransaction) };
    },
    appendEvents(batch) {
      return fast ? fast.appendEvents(batch) : store.appendEvents(batch);
    },
    claimDeliveries(options) {
      return fast ? fast.claimDeliveries(options) : store.claimDeliveries(options);
    },
    finishRuns(input) {
      return fast ? fast.finishRuns(input) : store.finishRuns(input);
    },
  };
}

/**
 * Kysely prepares every query anew; with better-sqlite3 preparing costs about
 * as much as running a small query. Statements are kept by their SQL text
 * (the queries are built from a fixed set of shapes, so the cache stays small).
 */
function withStatementCache(database: SqliteDatabase.Database): SqliteDatabase.Database {
  const statements = new Map<string, SqliteDatabase.Statement>();
  const prepare = database.prepare.bind(database);
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property !== "prepare") {
        const value = Reflect.get(target, property, receiver);
        // Native methods must be called on the database itself, not on the proxy.
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (given: string) => {
        // Kysely opens its transactions with a plain BEGIN: one that reads and then writes gets SQLITE_BUSY at
        // once, without waiting, when the checkpoint thread holds the write lock. IMMEDIATE takes the lock
        // first, waiting for it (busy_timeout) like any single write; this process is the only writer.
        const sql = given === "begin" ? "begin immediate" : given;
        let statement = statements.get(sql);
        if (!statement) {
          if (statements.size >= 500) statements.clear();
          statement = prepare(sql);
          statements.set(sql, statement);
        }
        return statement;
      };
    },
  });
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
