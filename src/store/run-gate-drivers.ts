import type SqliteDatabase from "better-sqlite3";
import { CompiledQuery, SqliteAdapter, type Kysely } from "kysely";
import type { GateDialect, GateWork } from "./run-gate-work.js";

/**
 * Runs the gate's work (run-gate-work.ts) on a database: synchronously on
 * better-sqlite3, inside a transaction its caller holds (the SQLite append
 * and finishRuns), or through Kysely, inside `db` (a transaction) on
 * SQLite or PostgreSQL. SQLite locks the whole file on write: `{lock}` is
 * PostgreSQL's FOR UPDATE only.
 */
export function gateRunnerFor(database: SqliteDatabase.Database): <T>(work: GateWork<T>) => T {
  // By the work's own text, as it yields it: mostly the same string each time, whose hash V8 keeps. (A text with
  // `{lock}` taken out was a new string for every statement: hashed and scanned again, 5 % of a one-at-a-time
  // line's thread in a profile.)
  const statements = new Map<string, SqliteDatabase.Statement>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = database.prepare(sql.replace("{lock}", ""))));
    return statement;
  };
  return (work) => {
    let step = work.next();
    while (!step.done) {
      const { sql, params, rows } = step.value;
      const statement = prepared(sql);
      step = work.next(rows ? statement.all(...params) : statement.run(...params).changes);
    }
    return step.value;
  };
}

/** The dialect of the gate's statements on `db` (run-gate-work.ts writes a few steps as one statement on PostgreSQL). */
export function gateDialectOf(db: Kysely<any>): GateDialect {
  return db.getExecutor().adapter instanceof SqliteAdapter ? "sqlite" : "postgres";
}

export async function runGateWork<T>(db: Kysely<any>, work: GateWork<T>): Promise<T> {
  const sqlite = gateDialectOf(db) === "sqlite";
  let step = work.next();
  while (!step.done) {
    const { sql, params, rows } = step.value;
    const text = sqlite ? sql.replace("{lock}", "") : numberedPlaceholders(sql.replace("{lock}", " FOR UPDATE"));
    const result = await db.executeQuery(CompiledQuery.raw(text, params));
    step = work.next(rows ? result.rows : Number(result.numAffectedRows ?? 0));
  }
  return step.value;
}

/** `?` placeholders as PostgreSQL's `$1, $2…` (the gate's SQL has no `?` inside literals). */
export function numberedPlaceholders(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}
