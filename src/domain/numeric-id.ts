/**
 * Numeric emit ids for the `greatest` dedupe strategy. Ids are often numeric
 * strings too big for a double (tweet and snowflake ids run past 2^53), so
 * whole numbers are compared exactly as bigints; only ids with a fraction or
 * an exponent that is not a whole number are compared as doubles.
 */
export type NumericId = bigint | number;

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The comparable value of a numeric id (a finite number or a numeric string), or null. */
export function numericIdValue(id: unknown): NumericId | null {
  if (typeof id === "number") {
    if (!Number.isFinite(id)) return null;
    return Number.isInteger(id) ? BigInt(id) : id;
  }
  if (typeof id !== "string") return null;
  if (INTEGER.test(id)) return BigInt(id);
  if (!DECIMAL.test(id)) return null;
  const value = Number(id);
  if (!Number.isFinite(value)) return null;
  return Number.isInteger(value) ? BigInt(value) : value;
}

export function isNumericId(id: unknown): boolean {
  return numericIdValue(id) !== null;
}

/** The canonical decimal text of a numeric id, as kept in dedupe state (JSON has no bigint). */
export function numericIdText(value: NumericId): string {
  return value.toString();
}
