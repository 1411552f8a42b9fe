/**
 * Strict JSON checks for what leaves user code (events, db values, return
 * values). JSON.stringify is lenient in ways that lose data silently (a Map
 * becomes {}, a function disappears), so the first such spot is named instead.
 */

const MAX_DEPTH = 500;

/** Objects that JSON.stringify turns into {} or drops: almost always a mistake. */
const LOSSY_CLASSES: Array<[new (...args: never[]) => unknown, string]> = [
  [Map, "a Map"],
  [Set, "a Set"],
  [WeakMap, "a WeakMap"],
  [WeakSet, "a WeakSet"],
  [Promise, "a Promise (missing await?)"],
  [RegExp, "a RegExp"],
];

function describeKind(value: unknown): string | null {
  switch (typeof value) {
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
    case "bigint":
      return "a BigInt";
    case "undefined":
      return "undefined";
    default:
      break;
  }
  if (typeof value === "object" && value !== null) {
    for (const [type, label] of LOSSY_CLASSES) if (value instanceof type) return label;
  }
  return null;
}

function pathOf(path: string): string {
  return path === "" ? "the top level" : path;
}

/** What is not JSON, and where: path segments innermost first, added as the search unwinds. */
interface Found {
  what: string;
  segments: string[];
}

/**
 * Null when `value` is JSON data; otherwise says what is not and where
 * ("a function at .options[2].load"). Undefined is allowed where JSON drops it
 * quietly (an object field), not at the top level. Every event a component
 * emits goes through here, so the path is only spelled out once something is found.
 */
export function findNonJson(value: unknown): string | null {
  const open = new Set<object>();

  const visit = (current: unknown, depth: number, dropsUndefined: boolean): Found | null => {
    if (current === undefined && dropsUndefined) return null;
    const kind = describeKind(current);
    if (kind) return { what: kind, segments: [] };
    if (typeof current !== "object" || current === null) return null;
    if (depth > MAX_DEPTH) return { what: `nesting deeper than ${MAX_DEPTH} levels`, segments: [] };
    const toJSON = (current as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return visit(toJSON.call(current), depth + 1, false);
    if (open.has(current)) return { what: "a circular reference", segments: [] };
    open.add(current);
    try {
      if (Array.isArray(current)) {
        for (let index = 0; index < current.length; index += 1) {
          // JSON writes undefined array items as null, which keeps the array's shape.
          const found = visit(current[index], depth + 1, true);
          if (found) {
            found.segments.push(`[${index}]`);
            return found;
          }
        }
        return null;
      }
      const record = current as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const found = visit(record[key], depth + 1, true);
        if (found) {
          found.segments.push(`.${key}`);
          return found;
        }
      }
      return null;
    } finally {
      open.delete(current);
    }
  };

  const found = visit(value, 0, false);
  return found ? `${found.what} at ${pathOf(found.segments.reverse().join(""))}` : null;
}

/** `value` as a JSON text, or an Error saying why it cannot be one, prefixed by `what`. */
export function toJsonText(value: unknown, what: string): string {
  const problem = findNonJson(value);
  if (problem) throw new TypeError(`${what} is not JSON-serializable: found ${problem}.`);
  return JSON.stringify(value);
}
