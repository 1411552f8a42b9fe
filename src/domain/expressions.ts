import { ValidationError } from "./errors.js";

/**
 * Prop values of workflow steps may refer to the trigger event and to earlier
 * steps: `{{steps.trigger.event.body.id}}`, `{{steps.fetch.$return_value.items[0]}}`.
 * Only paths are allowed, never code: an expression is evaluated in the server,
 * where user code must not run. A value that is one expression alone keeps the
 * type of what it points at; expressions inside text are joined into text.
 */

export type PathSegment = string | number;

export interface ParsedTemplate {
  /** Text and expressions in order; an expression is its path. */
  parts: Array<{ text: string } | { path: PathSegment[]; source: string }>;
  /** True when the whole value is one expression (`"{{ steps.a.b }}"`). */
  whole: boolean;
}

const EXPRESSION = /\{\{\s*(.*?)\s*\}\}/g;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*/;

/** Reads a path such as `steps.a.b[0]["c d"]` into its segments; throws a sentence saying what is wrong. */
export function parsePath(source: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let rest = source.trim();
  const head = IDENTIFIER.exec(rest);
  if (!head) throw new Error(`"${source}" must start with a name, such as steps.trigger.event`);
  segments.push(head[0]);
  rest = rest.slice(head[0].length);
  while (rest.length > 0) {
    if (rest.startsWith(".")) {
      const name = IDENTIFIER.exec(rest.slice(1));
      if (!name) throw new Error(`"${source}" has a "." not followed by a name`);
      segments.push(name[0]);
      rest = rest.slice(1 + name[0].length);
      continue;
    }
    const index = /^\[\s*(\d+)\s*\]/.exec(rest);
    if (index) {
      segments.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    const quoted = /^\[\s*(["'])((?:\\.|(?!\1).)*)\1\s*\]/.exec(rest);
    if (quoted) {
      segments.push(quoted[2]!.replace(/\\(.)/g, "$1"));
      rest = rest.slice(quoted[0].length);
      continue;
    }
    throw new Error(`"${source}" is not a path (only names, [0] indexes and ["keys"] are allowed, not code)`);
  }
  return segments;
}

/** Splits a string into text and expressions. */
export function parseTemplate(value: string): ParsedTemplate {
  const parts: ParsedTemplate["parts"] = [];
  let last = 0;
  for (const match of value.matchAll(EXPRESSION)) {
    if (match.index! > last) parts.push({ text: value.slice(last, match.index) });
    parts.push({ path: parsePath(match[1]!), source: match[1]! });
    last = match.index! + match[0].length;
  }
  if (last < value.length) parts.push({ text: value.slice(last) });
  const whole = parts.length === 1 && "path" in parts[0]!;
  return { parts, whole };
}

/** Whether a prop value holds any expression (anywhere inside it). */
export function hasExpressions(value: unknown): boolean {
  // The pattern evaluation uses (`{{` and a newline count): anything it would evaluate is checked on save.
  if (typeof value === "string") return new RegExp(EXPRESSION.source).test(value);
  if (Array.isArray(value)) return value.some(hasExpressions);
  if (value && typeof value === "object") return Object.values(value).some(hasExpressions);
  return false;
}

/** Follows a path in `scope`; undefined when any step of it is missing. */
export function lookup(scope: Record<string, unknown>, path: PathSegment[]): unknown {
  let current: unknown = scope;
  for (const segment of path) {
    if (current === null || current === undefined) return undefined;
    if (typeof current !== "object") return undefined;
    // Own properties only: a path must not reach prototypes (`constructor`, `__proto__`).
    if (!Object.hasOwn(current as object, segment)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/**
 * Evaluates every expression inside a prop value (strings, arrays, objects).
 * Errors name the step and the prop: `steps[2].props.url`.
 */
export function evaluateProp(value: unknown, scope: Record<string, unknown>, field: string): unknown {
  if (typeof value === "string") return evaluateString(value, scope, field);
  if (Array.isArray(value)) return value.map((item, index) => evaluateProp(item, scope, `${field}[${index}]`));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = evaluateProp(item, scope, `${field}.${key}`);
    return out;
  }
  return value;
}

/**
 * A step's configured props with their expressions evaluated against `steps`
 * (what the trigger and the earlier steps left). The server evaluates them
 * for built-in steps, the runner for sandboxed ones; the same rules either way.
 * Throws a ValidationError naming `<field>.props.<prop>` and the step.
 */
export function evaluateStepProps(props: Record<string, unknown>, steps: Record<string, unknown>, step: { name: string; field: string }): Record<string, unknown> {
  const evaluated: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(props)) {
    const field = `${step.field}.props.${name}`;
    try {
      evaluated[name] = evaluateProp(value, { steps }, field);
    } catch (error) {
      if (error instanceof ValidationError) throw new ValidationError(field, `Step "${step.name}": ${error.message}`);
      throw error;
    }
  }
  return evaluated;
}

function evaluateString(value: string, scope: Record<string, unknown>, field: string): unknown {
  if (!value.includes("{{")) return value;
  let template: ParsedTemplate;
  try {
    template = parseTemplate(value);
  } catch (error) {
    throw new ValidationError(field, `The expression in ${field} cannot be read: ${(error as Error).message}.`);
  }
  if (template.whole) {
    const part = template.parts[0] as { path: PathSegment[] };
    return lookup(scope, part.path);
  }
  return template.parts
    .map((part) => {
      if ("text" in part) return part.text;
      const found = lookup(scope, part.path);
      if (found === undefined || found === null) return "";
      return typeof found === "string" ? found : JSON.stringify(found);
    })
    .join("");
}
