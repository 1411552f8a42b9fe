// The comparisons of the filter step: numbers when both sides are numbers (or numeric
// text), dates when both are dates, text otherwise; a clear error when nothing fits.

export const OPERATORS = [
  { value: "equals", label: "is equal to", binary: true },
  { value: "not_equals", label: "is not equal to", binary: true },
  { value: "greater_than", label: "is greater than", binary: true },
  { value: "greater_or_equal", label: "is greater than or equal to", binary: true },
  { value: "less_than", label: "is less than", binary: true },
  { value: "less_or_equal", label: "is less than or equal to", binary: true },
  { value: "contains", label: "contains", binary: true },
  { value: "not_contains", label: "does not contain", binary: true },
  { value: "starts_with", label: "starts with", binary: true },
  { value: "ends_with", label: "ends with", binary: true },
  { value: "matches", label: "matches the regular expression", binary: true },
  { value: "exists", label: "exists", binary: false },
  { value: "not_exists", label: "does not exist", binary: false },
  { value: "is_empty", label: "is empty", binary: false },
  { value: "is_not_empty", label: "is not empty", binary: false },
  { value: "is_true", label: "is true", binary: false },
  { value: "is_false", label: "is false", binary: false },
];

const NUMERIC = /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

function asNumber(value) {
  if (typeof value === "number") return value;
  if (typeof value === "string" && NUMERIC.test(value)) return Number(value);
  return NaN;
}

function asDate(value) {
  // Only text that looks like a date (2026-11-27, 2026-11-27T09:00Z…): "12" is a number, not a year.
  return typeof value === "string" && /\d{4}-\d\d-\d\d/.test(value) ? Date.parse(value) : NaN;
}

const typeName = (value) => (value === null ? "null" : Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : `a ${typeof value}`);

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
}

function equal(a, b, caseSensitive) {
  const x = asNumber(a);
  const y = asNumber(b);
  if (!Number.isNaN(x) && !Number.isNaN(y)) return x === y;
  if (typeof a === "object" || typeof b === "object") return deepEqual(a, b);
  const left = String(a);
  const right = String(b);
  return caseSensitive ? left === right : left.toLowerCase() === right.toLowerCase();
}

/** -1, 0 or 1; throws a sentence when the two cannot be ordered. */
function order(a, b) {
  const x = asNumber(a);
  const y = asNumber(b);
  if (!Number.isNaN(x) && !Number.isNaN(y)) return Math.sign(x - y);
  const p = asDate(a);
  const q = asDate(b);
  if (!Number.isNaN(p) && !Number.isNaN(q)) return Math.sign(p - q);
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  throw new Error(`Cannot order ${typeName(a)} and ${typeName(b)}: "greater" and "less" compare numbers, dates or text. Check the props "value" and "compareTo".`);
}

function regex(pattern, caseSensitive) {
  const text = String(pattern);
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(text);
  try {
    if (literal) return new RegExp(literal[1], literal[2].includes("i") || caseSensitive ? literal[2] : literal[2] + "i");
    return new RegExp(text, caseSensitive ? "" : "i");
  } catch (error) {
    throw new Error(`Prop "compareTo": ${JSON.stringify(text)} is not a regular expression (${error.message}).`);
  }
}

function text(value, caseSensitive, role) {
  if (typeof value === "object" && value !== null) throw new Error(`This operator compares text; the prop "${role}" is ${typeName(value)}.`);
  const result = String(value ?? "");
  return caseSensitive ? result : result.toLowerCase();
}

const isEmpty = (value) =>
  value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0) || (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0);

/** Whether `value <operator> compareTo` holds. */
export function holds(operator, value, compareTo, caseSensitive) {
  switch (operator) {
    case "equals":
      return equal(value, compareTo, caseSensitive);
    case "not_equals":
      return !equal(value, compareTo, caseSensitive);
    case "greater_than":
      return order(value, compareTo) > 0;
    case "greater_or_equal":
      return order(value, compareTo) >= 0;
    case "less_than":
      return order(value, compareTo) < 0;
    case "less_or_equal":
      return order(value, compareTo) <= 0;
    case "contains":
    case "not_contains": {
      let found;
      if (Array.isArray(value)) found = value.some((item) => equal(item, compareTo, caseSensitive));
      else if (typeof value === "string" || typeof value === "number") found = text(value, caseSensitive, "value").includes(text(compareTo, caseSensitive, "compareTo"));
      else throw new Error(`"contains" looks in text or a list; the prop "value" is ${typeName(value)}.`);
      return operator === "contains" ? found : !found;
    }
    case "starts_with":
      return text(value, caseSensitive, "value").startsWith(text(compareTo, caseSensitive, "compareTo"));
    case "ends_with":
      return text(value, caseSensitive, "value").endsWith(text(compareTo, caseSensitive, "compareTo"));
    case "matches":
      return regex(compareTo, caseSensitive).test(text(value, true, "value"));
    case "exists":
      return value !== undefined && value !== null;
    case "not_exists":
      return value === undefined || value === null;
    case "is_empty":
      return isEmpty(value);
    case "is_not_empty":
      return !isEmpty(value);
    case "is_true":
      return value === true || (typeof value === "string" && value.trim().toLowerCase() === "true");
    case "is_false":
      return value === false || (typeof value === "string" && value.trim().toLowerCase() === "false");
    default:
      throw new Error(`Prop "operator" must be one of ${OPERATORS.map((o) => o.value).join(", ")}; got ${JSON.stringify(operator)}.`);
  }
}
