import fc from "fast-check";

/**
 * Values a statement's parameter may hold, for properties comparing a way of
 * writing them into SQL (inline literals, EXECUTE arguments) with sending
 * them as parameters: any text PostgreSQL can hold (no NUL), the texts that
 * break naive quoting, numbers, booleans, null and JSON objects.
 */
export const parameterValues = fc.oneof(
  fc.string({ unit: "binary" }).filter((text) => !text.includes("\0")),
  fc.constantFrom("'", "''", "\\", "\\'", "$1", "'$1'", "E'\\x41'", "$$", "$tag$", "-- not a comment", "/* nor this */", '"', ";", "é€😀"),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue().filter((json) => json !== null && typeof json === "object" && !Array.isArray(json) && !JSON.stringify(json).includes("\\u0000")),
);
