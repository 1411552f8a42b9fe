import type pg from "pg";
import { InlineRefused, literalOf } from "./one-trip-literals.js";

/**
 * Statements of one-trip messages kept prepared on each connection, sent as
 * `EXECUTE name(values)`. A simple-query message (the only one that carries
 * several statements) has no parameters, so its statements are planned
 * afresh every time, and planning the gate's statements (CTEs writing three
 * tables) took longer than running them: 0.5-0.75 ms each against
 * 0.25-0.3, between every two runs of a one-at-a-time line. A prepared
 * statement is planned generically once PostgreSQL has seen that a generic
 * plan does as well (after five executions), then never again.
 *
 * PREPARE leaves the parameters' types to the statement's context, exactly
 * as the extended protocol's unnamed statements (the usual path) do, and an
 * EXECUTE's quoted literals are read as those types: the statement means
 * the same as with parameters. A statement PostgreSQL will not prepare is
 * sent inline from then on (one-trip-literals.ts).
 */

/** Prepared statements kept per connection at most; past it, new shapes go inline (a batch's size makes a shape). */
const PREPARED_MAX = 200;

interface ConnectionStatements {
  /** SQL text → its prepared statement's name on this connection. */
  names: Map<string, string>;
  /** Set when a statement's result shape changed under it (a migration): DEALLOCATE ALL before the next message. */
  stale: boolean;
}

const byConnection = new WeakMap<pg.ClientBase, ConnectionStatements>();
/**
 * Off once an EXECUTE found no statement its connection had prepared: a
 * pooler in transaction mode (PgBouncer) between Runnel and PostgreSQL
 * hands each transaction to any server connection, and session state does
 * not follow. Everything goes inline from then on (that message failed).
 */
let preparing = true;
/** SQL texts PostgreSQL refused to prepare (a parameter whose type nothing decides): inline, on every connection. */
const unpreparable = new Set<string>();

/**
 * The statement as the text to put in a message on `client`: an EXECUTE
 * of it prepared there (prepared now, in a message of its own, when it is
 * new to the connection), or its values inline. Throws InlineRefused when
 * neither can be written; when the PREPARE fails inside a transaction, the
 * transaction is aborted and the caller rolls it back.
 */
export async function statementText(client: pg.ClientBase, sql: string, parameters: readonly unknown[], inline: (sql: string, parameters: readonly unknown[]) => string): Promise<string> {
  if (!preparing || parameters.length === 0 || unpreparable.has(sql)) return inline(sql, parameters);
  const statements = statementsOf(client);
  if (statements.stale) {
    await client.query("DEALLOCATE ALL");
    statements.names.clear();
    statements.stale = false;
  }
  let name = statements.names.get(sql);
  if (name === undefined) {
    if (statements.names.size >= PREPARED_MAX) return inline(sql, parameters);
    name = `runnel_${statements.names.size + 1}`;
    try {
      await client.query(`PREPARE ${name} AS ${sql}`);
    } catch (error) {
      unpreparable.add(sql);
      throw new InlineRefused(`PostgreSQL would not prepare a statement (${(error as Error).message})`);
    }
    statements.names.set(sql, name);
  }
  return `EXECUTE ${name}(${parameters.map(literalOf).join(", ")})`;
}

/**
 * After a message failed on `client`: when a prepared statement's result no
 * longer fits its plan (a migration added a column under `SELECT *`), its
 * connection drops them all before its next message; when the statement was
 * not there at all, nothing is prepared any more.
 */
export function noteFailure(client: pg.ClientBase, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "0A000") statementsOf(client).stale = true;
  // "prepared statement does not exist": not the connection it was prepared on (see `preparing`).
  if (code === "26000") preparing = false;
}

function statementsOf(client: pg.ClientBase): ConnectionStatements {
  let statements = byConnection.get(client);
  if (!statements) byConnection.set(client, (statements = { names: new Map(), stale: false }));
  return statements;
}
