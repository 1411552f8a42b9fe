import { explainTimeZoneProblem } from "./cron-expression.js";
import { describeValue } from "./describe-value.js";
import type { PropOption, PropType } from "./prop-types.js";

/**
 * Checks of one value against a prop's type: used for configured values and
 * for declared defaults. Each check returns what is wrong as the tail of a
 * sentence ("must be a whole number; got 1.5."), or null; the caller names
 * the prop in front of it.
 */
export interface ValueRules {
  baseType: PropType;
  isArray: boolean;
  min?: number | undefined;
  max?: number | undefined;
}

export function checkPropValue(rules: ValueRules, value: unknown): string | null {
  if (!rules.isArray) return checkItem(rules, value);
  if (!Array.isArray(value)) return `must be a list (JSON array) of ${plural(rules.baseType)}; got ${describeValue(value)}.`;
  for (const [index, item] of value.entries()) {
    const problem = checkItem(rules, item);
    if (problem !== null) return `item ${index} ${problem}`;
  }
  return null;
}

function checkItem(rules: ValueRules, value: unknown): string | null {
  const got = `got ${describeValue(value)}.`;
  switch (rules.baseType) {
    case "boolean":
      return typeof value === "boolean" ? null : `must be true or false; ${got}`;
    case "string":
      return typeof value === "string" ? null : `must be a string; ${got}`;
    case "integer":
      return checkInteger(rules, value);
    case "object":
      return isPlainObject(value) ? null : `must be a JSON object; ${got}`;
    case "any":
      return value === undefined ? `must be a JSON value; ${got}` : null;
    case "data_store":
      return typeof value === "string" && value !== "" ? null : `must be the name of a data store; ${got}`;
    case "http_request":
      return checkHttpRequest(value);
    default:
      return `takes no configured value; ${got}`;
  }
}

function checkInteger(rules: ValueRules, value: unknown): string | null {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) return `must be a whole number; got ${describeValue(value)}.`;
  if (rules.min !== undefined && value < rules.min) return `must be at least ${rules.min}; got ${value}.`;
  if (rules.max !== undefined && value > rules.max) return `must be at most ${rules.max}; got ${value}.`;
  return null;
}

/** The request an `http_request` prop holds: the fields are checked only as far as their JSON types. */
function checkHttpRequest(value: unknown): string | null {
  if (!isPlainObject(value)) return `must be a JSON object describing a request ({ method, url, headers, params, body }); got ${describeValue(value)}.`;
  for (const field of ["method", "url"] as const) {
    const text = value[field];
    if (text !== undefined && typeof text !== "string") return `${field} must be a string; got ${describeValue(text)}.`;
  }
  return null;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function plural(type: PropType): string {
  return type === "integer" ? "whole numbers" : type === "boolean" ? "true/false values" : `${type}s`;
}

/** The value an option stands for. */
export function optionValue(option: PropOption): unknown {
  return typeof option === "object" ? option.value : option;
}

/** The options a prop allows, the first ten, for a message. */
export function optionsList(prop: { options?: readonly PropOption[] | undefined }): string {
  const options = prop.options ?? [];
  const allowed = options.slice(0, 10).map((option) => JSON.stringify(optionValue(option)));
  return `${allowed.join(", ")}${options.length > 10 ? ", …" : ""}`;
}

/** Whether `value` is one of the options' values (JSON-equal, so object values compare by content). */
export function isAmongOptions(value: unknown, options: readonly PropOption[]): boolean {
  const text = JSON.stringify(value);
  return options.some((option) => {
    const candidate = optionValue(option);
    return candidate === value || (text !== undefined && JSON.stringify(candidate) === text);
  });
}

export type TimerConfig = { intervalSeconds: number } | { cron: string; timezone?: string };

/**
 * A timer's configuration: `{ intervalSeconds }` or `{ cron, timezone? }`
 * (the zone an IANA name; without one, UTC). The form the API echoes
 * (`{ interval_seconds, cron: null }`, `timezone` when set) is accepted too, so
 * that a source read from the API can be sent back unchanged. A cron
 * expression is checked for shape only (5 or 6 fields); the scheduler parses it.
 */
export function normalizeTimer(value: unknown): { value: TimerConfig } | { error: string } {
  const shape = '{ intervalSeconds: <whole seconds, at least 1> } or { cron: "<5 or 6 fields>", timezone: "<IANA zone, optional>" }';
  if (!isPlainObject(value)) return { error: `must be ${shape}; got ${describeValue(value)}.` };
  const unknown = Object.keys(value).filter((key) => !["intervalSeconds", "interval_seconds", "cron", "timezone"].includes(key));
  if (unknown.length > 0) return { error: `has an unknown field "${unknown[0]}"; a timer is ${shape}.` };
  const interval = value.intervalSeconds ?? value.interval_seconds ?? null;
  const cron = value.cron ?? null;
  const timezone = value.timezone ?? null;
  if (interval !== null && cron !== null) return { error: `gives both intervalSeconds and cron; give one: ${shape}.` };
  if (cron !== null) {
    if (typeof cron !== "string") return { error: `cron must be a string; got ${describeValue(cron)}.` };
    const fields = cron.trim().split(/\s+/).filter(Boolean).length;
    if (fields < 5 || fields > 6) return { error: `cron must have 5 or 6 space-separated fields ("*/15 * * * *"); got ${fields}.` };
    if (timezone === null) return { value: { cron: cron.trim() } };
    if (typeof timezone !== "string") return { error: `timezone must be an IANA time zone name such as "Europe/Paris"; got ${describeValue(timezone)}.` };
    const problem = explainTimeZoneProblem(timezone);
    if (problem !== null) return { error: problem };
    return { value: { cron: cron.trim(), timezone: timezone.trim() } };
  }
  if (interval === null) return { error: `must be ${shape}; got neither.` };
  // An interval is the same length in every zone: a zone on it would do nothing, so it is refused rather than ignored.
  if (timezone !== null) return { error: `gives a timezone with intervalSeconds; a time zone applies to a cron schedule only: { cron: "0 9 * * *", timezone: ${JSON.stringify(timezone)} }.` };
  if (typeof interval !== "number" || !Number.isSafeInteger(interval) || interval < 1) {
    return { error: `intervalSeconds must be a whole number of seconds, at least 1; got ${describeValue(interval)}.` };
  }
  return { value: { intervalSeconds: interval } };
}
