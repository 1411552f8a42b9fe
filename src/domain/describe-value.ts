/**
 * A short description of a value for error messages ("got a string",
 * "got 1.5"): enough to see what went wrong without echoing a whole payload,
 * which may be large or secret.
 */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return value === "" ? "an empty string" : "a string";
    case "number":
    case "boolean":
      return String(value);
    case "object":
      return "an object";
    default:
      return `a ${typeof value}`;
  }
}

/**
 * The type of a value, never the value ("a string", "a number", "nothing"):
 * for messages about values that may come from a secret.
 */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}
