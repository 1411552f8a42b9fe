import pg from "pg";

/** Values written into SQL as quoted literals, for the statements of a simple-query message (one-trip.ts), which has no parameters. */

/**
 * The statement with each `$n` replaced by its value as a quoted literal
 * (the simple-query message has no parameters). Values are turned into
 * text exactly as node-postgres sends a parameter (prepareValue), and a
 * quoted literal is typed by its context the way an untyped parameter is:
 * the statement means the same. Placeholders inside quoted strings and
 * identifiers are left alone. A value with a NUL character is refused:
 * PostgreSQL's text cannot hold one, and the message would end there.
 * Throws InlineRefused when the statement cannot be written so.
 */
export function inlineParameters(sql: string, parameters: readonly unknown[]): string {
  let out = "";
  let at = 0;
  while (at < sql.length) {
    const char = sql[at]!;
    if (char === "'" || char === '"') {
      const end = closingQuote(sql, at);
      out += sql.slice(at, end);
      at = end;
      continue;
    }
    if (char === "$" && isDigit(sql.charCodeAt(at + 1))) {
      let end = at + 1;
      while (isDigit(sql.charCodeAt(end))) end += 1;
      const index = Number(sql.slice(at + 1, end)) - 1;
      if (index < 0 || index >= parameters.length) throw new InlineRefused(`The statement refers to parameter $${index + 1}, but has ${parameters.length}.`);
      out += literalOf(parameters[index]);
      at = end;
      continue;
    }
    out += char;
    at += 1;
  }
  return out;
}

/**
 * A value as a quoted SQL literal, or NULL: the text node-postgres would
 * send for it as a parameter (its prepareValue), for the kinds Runnel's
 * statements pass. Other kinds (dates, arrays, objects that say how
 * PostgreSQL should see them, with toPostgres) are refused rather than
 * guessed at: the caller sends the statements the usual way instead.
 */
export function literalOf(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  let text: string;
  if (typeof value === "string") text = value;
  else if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") text = String(value);
  else if (Buffer.isBuffer(value)) text = `\\x${value.toString("hex")}`;
  else if (typeof value === "object" && !Array.isArray(value) && !(value instanceof Date) && !ArrayBuffer.isView(value) && typeof (value as { toPostgres?: unknown }).toPostgres !== "function") text = JSON.stringify(value);
  else throw new InlineRefused(`a parameter of a kind not written inline (${Object.prototype.toString.call(value)})`);
  if (text.includes("\0")) throw new InlineRefused("a value holds a NUL character, which PostgreSQL's text cannot store");
  return pg.escapeLiteral(text);
}

/** A statement that cannot be written with its values inline: send it with parameters instead. */
export class InlineRefused extends Error {}

/** The index just past the quote that closes the one at `start` (a doubled quote is part of the text). */
function closingQuote(sql: string, start: number): number {
  const quote = sql[start]!;
  let at = start + 1;
  while (at < sql.length) {
    if (sql[at] === quote) {
      if (sql[at + 1] === quote) at += 2;
      else return at + 1;
    } else at += 1;
  }
  throw new InlineRefused("The statement has an unclosed quote.");
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
