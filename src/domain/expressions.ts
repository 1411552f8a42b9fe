import { ValidationError } from "./errors.js";

/**
 * Prop values of workflow steps may refer to the trigger event and to earlier
 * steps: `{{steps.trigger.event.body.id}}`, `{{steps.fetch.$return_value.items[0]}}`.
 * Only paths are allowed, never code: an expression is evaluated in the server,
 * where user code must not run. A value that is one expression alone keeps the
 * type of what it points at; expressions inside text are joined into text.
 *
 * `{{process.env.NAME}}` reads the owner's environment variable NAME (SEED:
 * "for actions, environment variables are passed as prop values in a
 * workflow"). The host puts the variables a call's steps name into the scope
 * as `process.env`, per run; they are never part of the stored workflow.
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

/**
 * Templates read lately, by their text: a workflow's props are the same text
 * on every run, evaluated once per step per run. Kept while few; emptied when
 * full (a bound, not an order). What it holds is never changed by a reader.
 */
const parsedTemplates = new Map<string, ParsedTemplate>();
const MAX_PARSED_TEMPLATES = 2048;

/** Splits a string into text and expressions; throws a sentence saying what is wrong. */
export function parseTemplate(value: string): ParsedTemplate {
  const known = parsedTemplates.get(value);
  if (known) return known;
  const parsed = parseTemplateText(value);
  if (parsedTemplates.size >= MAX_PARSED_TEMPLATES) parsedTemplates.clear();
  parsedTemplates.set(value, parsed);
  return parsed;
}

function parseTemplateText(value: string): ParsedTemplate {
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

/** `process.env.NAME`: the variable's name, or null for any other path. */
export function envNameOf(path: PathSegment[]): string | null {
  const [root, env, name] = path;
  return root === "process" && env === "env" && path.length === 3 && typeof name === "string" ? name : null;
}

/** The `{{ }}` expressions of a value, as written, for messages. */
export function expressionsIn(value: unknown): string[] {
  if (typeof value === "string") return [...value.matchAll(EXPRESSION)].map((match) => match[0]);
  if (Array.isArray(value)) return value.flatMap(expressionsIn);
  if (value && typeof value === "object") return Object.values(value).flatMap(expressionsIn);
  return [];
}

/** The names of the environment variables a value reads (`{{process.env.NAME}}`), each once. */
export function envNamesIn(value: unknown): string[] {
  const names = new Set<string>();
  for (const expression of expressionsIn(value)) {
    try {
      const name = envNameOf(parsePath(expression.slice(2, -2)));
      if (name !== null) names.add(name);
    } catch {
      // Unreadable: evaluating it fails the step with a ConfigurationError that says why.
    }
  }
  return [...names];
}

/**
 * What a prop value is, as far as expressions go: none in it; one expression
 * alone (its type is known only at run time); text with expressions inside
 * (a string); or a list or object with expressions somewhere inside.
 */
export function expressionShape(value: unknown): "none" | "whole" | "text" | "nested" {
  if (!hasExpressions(value)) return "none";
  if (typeof value !== "string") return "nested";
  try {
    return parseTemplate(value).whole ? "whole" : "text";
  } catch {
    return "text";
  }
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
export function evaluateStepProps(
  props: Record<string, unknown>,
  steps: Record<string, unknown>,
  step: { name: string; field: string },
  env: Record<string, string> = {},
): Record<string, unknown> {
  const evaluated: Record<string, unknown> = {};
  // A prototype-less copy: `process.env.constructor` must be an unknown name, not Object's.
  const scope = { steps, process: { env: Object.assign(Object.create(null) as Record<string, string>, env) } };
  for (const [name, value] of Object.entries(props)) {
    const field = `${step.field}.props.${name}`;
    try {
      evaluated[name] = evaluateProp(value, scope, field);
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
  const read = (part: { path: PathSegment[]; source: string }) => (part.path[0] === "process" ? readEnv(scope, part, field) : lookup(scope, part.path));
  if (template.whole) return read(template.parts[0] as { path: PathSegment[]; source: string });
  return template.parts
    .map((part) => {
      if ("text" in part) return part.text;
      const found = read(part);
      if (found === undefined || found === null) return "";
      return typeof found === "string" ? found : JSON.stringify(found);
    })
    .join("");
}

/** An environment variable the expression names; an unknown one (or any other `process` path) is a ValidationError naming it. */
function readEnv(scope: Record<string, unknown>, part: { path: PathSegment[]; source: string }, field: string): string {
  const name = envNameOf(part.path);
  if (name === null) throw new ValidationError(field, `The expression {{${part.source}}} in ${field} is not one Runnel knows: write {{process.env.NAME}} to read your environment variable NAME.`);
  const env = (scope.process as { env?: Record<string, string> } | undefined)?.env ?? {};
  if (!Object.hasOwn(env, name)) {
    throw new ValidationError(
      field,
      `The expression {{${part.source}}} in ${field} reads the environment variable ${name}, which you do not have. Set it (runnel env set ${name} <value>, or PUT /v1/env/${name}), then replay the run.`,
    );
  }
  return env[name]!;
}
