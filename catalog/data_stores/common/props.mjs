/** Props every data store component shares, so that each reads the same in the deploy form. */

export const dataStore = {
  type: "data_store",
  label: "Data store",
  description: "The name of one of your data stores (made by its first write), such as `orders`.",
};

export const key = {
  type: "string",
  label: "Key",
  description: "The record's key, such as `{{steps.trigger.event.body.id}}` (at most 1 KB).",
};

export const ttl = {
  type: "integer",
  label: "Expires after (seconds)",
  description: "Remove the record this many seconds after this write (at most a year). Left empty: kept until deleted.",
  min: 1,
  max: 365 * 24 * 60 * 60,
  optional: true,
};

/** What a value is, for a message about a record that holds the wrong kind. */
export function kindOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Keys are text; an expression may give a number (an id): it is used as its text, anything else is the prop's error. */
export function keyText(value, prop = "key") {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string" || value === "") throw new Error(`Prop "${prop}" must be non-empty text; got ${value === "" ? "empty text" : kindOf(value)}.`);
  return value;
}
