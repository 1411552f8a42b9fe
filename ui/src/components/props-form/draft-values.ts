import { shapeOf } from "./prop-kinds";
import type { ConfigurableProp, DraftValue, PropErrors, PropOption, PropsDraft, TimerDraft } from "./types";

/**
 * Between what the form holds (text, mostly) and the values the API takes.
 * Pure functions: the form calls them on every change and on submit.
 */

/** The value an option stands for. */
export function optionValue(option: PropOption): unknown {
  return typeof option === "object" && option !== null ? option.value : option;
}

/** What an option shows. */
export function optionLabel(option: PropOption): string {
  return typeof option === "object" && option !== null ? option.label : String(option);
}

/** A value as the key of a picked option (JSON, so 1 and "1" differ). */
export function encodeOption(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

/** The form's starting state: each prop's given value, else its default, else empty. */
export function initialDraft(props: ConfigurableProp[], given: Record<string, unknown> = {}): PropsDraft {
  const draft: PropsDraft = {};
  for (const prop of props) {
    const value = Object.hasOwn(given, prop.name) ? given[prop.name] : prop.default;
    draft[prop.name] = toDraft(prop, value);
  }
  return draft;
}

/** A configured value as the form holds it; undefined when there is none. */
export function toDraft(prop: ConfigurableProp, value: unknown): DraftValue | undefined {
  const shape = shapeOf(prop);
  if (shape.kind === "timer") return timerDraft(value);
  if (shape.kind === "app") return accountIdOf(value);
  if (value === undefined || value === null) return shape.kind === "boolean" && !shape.isArray && !shape.hasOptions ? false : undefined;
  if (shape.hasOptions) return shape.isArray && Array.isArray(value) ? value.map(encodeOption) : encodeOption(value);
  if (shape.isArray) return Array.isArray(value) ? value.map((item) => itemText(shape.kind, item)) : undefined;
  if (shape.kind === "boolean") return value === true;
  return itemText(shape.kind, value);
}

/** An app prop's configured value, `{ authProvisionId: "apn_…" }`, as the picked account's id. */
function accountIdOf(value: unknown): string | undefined {
  if (typeof value === "string" && value !== "") return value;
  const id = typeof value === "object" && value !== null ? (value as { authProvisionId?: unknown }).authProvisionId : undefined;
  return typeof id === "string" && id !== "" ? id : undefined;
}

function itemText(kind: string, value: unknown): string {
  if (kind === "json") return JSON.stringify(value, null, 2);
  return typeof value === "string" ? value : String(value);
}

function timerDraft(value: unknown): TimerDraft {
  const timer = (typeof value === "object" && value !== null ? value : {}) as { intervalSeconds?: unknown; interval_seconds?: unknown; cron?: unknown; timezone?: unknown };
  const interval = timer.intervalSeconds ?? timer.interval_seconds;
  const timezone = typeof timer.timezone === "string" ? timer.timezone : "";
  if (typeof timer.cron === "string" && timer.cron !== "") return { mode: "cron", interval: "", cron: timer.cron, timezone };
  return { mode: "interval", interval: typeof interval === "number" ? String(interval) : "", cron: "", timezone: "" };
}

export interface CheckedProps {
  /** The values to send as `configured_props` (props left empty and optional are left out). */
  values: Record<string, unknown>;
  /** What is wrong, by prop name, as checked before sending. */
  errors: PropErrors;
}

/**
 * The values to send, and what is wrong with the draft: required props
 * missing, whole numbers that are not, min/max, JSON that does not parse.
 * The API checks again; these checks only spare a round trip.
 */
export function checkDraft(props: ConfigurableProp[], draft: PropsDraft): CheckedProps {
  const values: Record<string, unknown> = {};
  const errors: PropErrors = {};
  for (const prop of props) {
    const shape = shapeOf(prop);
    if (shape.kind === "provided" || prop.hidden) continue;
    const result = checkOne(prop, draft[prop.name]);
    if ("error" in result) errors[prop.name] = result.error;
    else if (result.value !== undefined) values[prop.name] = result.value;
  }
  return { values, errors };
}

type Checked = { value: unknown } | { error: string };

/** One prop's value, or what is wrong with it. */
export function checkOne(prop: ConfigurableProp, draft: DraftValue | undefined): Checked {
  const shape = shapeOf(prop);
  const empty = isEmpty(draft);
  if (empty && shape.kind !== "timer") {
    // Left empty: the API applies the default of a prop that has one.
    if (prop.optional || prop.default !== undefined) return { value: undefined };
    if (shape.kind === "app") return { error: `Choose a ${prop.app ?? "connected"} account, or connect a new one.` };
    return { error: shape.isArray ? "Add at least one value: this prop is required." : "This prop is required." };
  }
  if (shape.kind === "timer") return checkTimer(prop, draft as TimerDraft | undefined);
  if (shape.kind === "app") return { value: { authProvisionId: String(draft) } };
  if (shape.hasOptions) {
    if (Array.isArray(draft)) return { value: draft.map(decodeOption) };
    return { value: decodeOption(String(draft)) };
  }
  if (shape.isArray) {
    const items = (draft as string[]).filter((item) => item.trim() !== "");
    const out: unknown[] = [];
    for (const [index, item] of items.entries()) {
      const checked = checkItem(prop, shape.kind, item);
      if ("error" in checked) return { error: `Item ${index + 1}: ${checked.error}` };
      out.push(checked.value);
    }
    return { value: out };
  }
  if (typeof draft === "boolean") return { value: draft };
  return checkItem(prop, shape.kind, String(draft));
}

function checkItem(prop: ConfigurableProp, kind: string, text: string): Checked {
  switch (kind) {
    case "integer": {
      if (!/^-?\d+$/.test(text.trim())) return { error: `Enter a whole number; "${text}" is not one.` };
      const value = Number(text.trim());
      if (!Number.isSafeInteger(value)) return { error: "This number is too large." };
      if (prop.min !== undefined && value < prop.min) return { error: `Enter ${prop.min} or more.` };
      if (prop.max !== undefined && value > prop.max) return { error: `Enter ${prop.max} or less.` };
      return { value };
    }
    case "boolean":
      if (text === "true" || text === "false") return { value: text === "true" };
      return { error: "Enter true or false." };
    case "json":
      try {
        const value: unknown = JSON.parse(text);
        if (prop.type !== "any" && (typeof value !== "object" || value === null || Array.isArray(value))) return { error: "Enter a JSON object, like {\"key\": \"value\"}." };
        return { value };
      } catch {
        return { error: "This is not valid JSON: check quotes, commas and brackets." };
      }
    default:
      return { value: text };
  }
}

function checkTimer(prop: ConfigurableProp, timer: TimerDraft | undefined): Checked {
  if (!timer) return prop.optional ? { value: undefined } : { error: "Give the timer an interval or a cron expression." };
  if (timer.mode === "cron") {
    const cron = timer.cron.trim();
    if (cron === "") return { error: "Enter a cron expression, like 0 * * * * (every hour)." };
    const timezone = timer.timezone.trim();
    // Kept as given: the server checks the zone and names it when it does not know it.
    return { value: timezone === "" ? { cron } : { cron, timezone } };
  }
  const text = timer.interval.trim();
  if (text === "") return prop.default !== undefined || prop.optional ? { value: undefined } : { error: "Enter the interval in seconds, like 60." };
  if (!/^\d+$/.test(text) || Number(text) < 1) return { error: "Enter the interval as a whole number of seconds, 1 or more." };
  return { value: { intervalSeconds: Number(text) } };
}

function decodeOption(encoded: string): unknown {
  try {
    return JSON.parse(encoded);
  } catch {
    return encoded;
  }
}

function isEmpty(draft: DraftValue | undefined): boolean {
  if (draft === undefined) return true;
  if (typeof draft === "string") return draft.trim() === "";
  if (Array.isArray(draft)) return draft.every((item) => item.trim() === "");
  return false;
}

/**
 * The values of the props declared before `name` that check out: what an
 * async options method receives as its earlier props (SEED: "configured
 * values of earlier props are passed to the options method").
 */
export function earlierValues(props: ConfigurableProp[], draft: PropsDraft, name: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const prop of props) {
    if (prop.name === name) break;
    const shape = shapeOf(prop);
    // Secrets too: an options method may need an API key given above (it goes to the server only, as deploy does).
    if (shape.kind === "provided") continue;
    const checked = checkOne(prop, draft[prop.name]);
    if ("value" in checked && checked.value !== undefined) out[prop.name] = checked.value;
  }
  return out;
}
