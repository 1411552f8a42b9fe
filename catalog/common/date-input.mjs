const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

/**
 * A date given as ISO 8601 text, epoch seconds or epoch milliseconds (a number or
 * numeric text; below 100,000,000,000 it is seconds), or now when left empty → epoch ms.
 */
export function toEpochMs(input, propName) {
  if (input === undefined || input === null || input === "") return Date.now();
  if (typeof input === "number" || (typeof input === "string" && NUMERIC.test(input))) {
    const number = Number(input);
    if (Number.isFinite(number)) return Math.abs(number) < 1e11 ? number * 1000 : number;
  }
  if (typeof input === "string") {
    const ms = Date.parse(input);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new Error(
    `Prop "${propName}": ${JSON.stringify(input)} is not a date. Give ISO 8601 text ("2026-11-27T09:00:00Z"), epoch seconds (1795770000) or epoch milliseconds, or leave it empty for now.`,
  );
}
