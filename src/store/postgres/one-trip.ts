import type pg from "pg";
import { InlineRefused, inlineParameters, literalOf } from "./one-trip-literals.js";
import { noteFailure, statementText } from "./prepared-statements.js";

export { InlineRefused, inlineParameters, literalOf };

/** A statement as Kysely compiles it for PostgreSQL: `$1, $2…` placeholders and their values. */
export interface TripStatement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Several statements in one message to PostgreSQL, answered with each one's
 * rows in order. PostgreSQL runs the statements of one simple-query message
 * as one transaction (all of them or none), each with a snapshot of its own
 * under READ COMMITTED, as separate statements inside BEGIN and COMMIT
 * would be: one round trip where those take one per statement and two more.
 * On a line that runs one at a time, every round trip between two runs is
 * paid in full, and under load each costs 0.5-1 ms.
 */
export type OneTrip = (statements: readonly TripStatement[]) => Promise<Array<Array<Record<string, unknown>>>>;

export function oneTripOn(pool: pg.Pool): OneTrip {
  return async (statements) => {
    // A connection of its own: the statements it has prepared are its own (prepared-statements.ts).
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      return await sendInOneMessage(client, statements);
    } catch (error) {
      // A connection that failed the message is still good, unless it is gone (then the pool drops it).
      if (!(error instanceof InlineRefused) && !(error as { code?: unknown }).code) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  };
}

/**
 * One connection of the pool held for a transaction sent in a few messages
 * (each several statements, as OneTrip sends them): the first opens it with
 * BEGIN, the last ends it with COMMIT, and answers read from one message can
 * shape the next. The work ends the transaction it opened (COMMIT, or
 * ROLLBACK when it gives up); when it throws, the transaction is rolled back
 * here, and a connection that cannot even do that is dropped from the pool.
 */
export type TripSession = <T>(work: (send: OneTrip) => Promise<T>) => Promise<T>;

export function tripSessionOn(pool: pg.Pool): TripSession {
  return async (work) => {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      return await work((statements) => sendInOneMessage(client, statements));
    } catch (error) {
      // No transaction open (refused before BEGIN went) is only a warning to PostgreSQL.
      await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  };
}

async function sendInOneMessage(client: pg.ClientBase, statements: readonly TripStatement[]): Promise<Array<Array<Record<string, unknown>>>> {
  if (statements.length === 0) return [];
  const texts: string[] = [];
  for (const statement of statements) texts.push(await statementText(client, statement.sql, statement.parameters, inlineParameters));
  try {
    // No values: node-postgres sends the simple-query message, the only one that carries several statements.
    const answer = (await client.query(texts.join(";\n"))) as unknown as pg.QueryResult | pg.QueryResult[];
    return (Array.isArray(answer) ? answer : [answer]).map((result) => result.rows as Array<Record<string, unknown>>);
  } catch (error) {
    noteFailure(client, error);
    throw error;
  }
}

/**
 * A statement that fails the whole message when `condition` (SQL) holds:
 * its error carries `marker`, which isGuardFailure recognises. It checks
 * what a message was written for (read earlier, or remembered) against the
 * rows as the statements before it locked them.
 */
export function guardStatement(condition: string, marker: string): TripStatement {
  // The cast is of the CASE, not of the text: PostgreSQL folds a constant's cast while planning, whatever the WHEN.
  return { sql: `SELECT CAST(CASE WHEN ${condition} THEN ${literalOf(marker)} END AS integer) AS unchanged`, parameters: [] };
}

/** Whether `error` is the failure of a guardStatement with `marker`. */
export function isGuardFailure(error: unknown, marker: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "22P02" && typeof message === "string" && message.includes(marker);
}
