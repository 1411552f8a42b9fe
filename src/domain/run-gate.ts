import { ValidationError } from "./errors.js";
import { describeValue } from "./describe-value.js";
import { lookup, parseTemplate, type PathSegment } from "./expressions.js";
import type { WorkflowSettings } from "./workflow-rules.js";
import type { WorkflowRun } from "./workflows.js";

/**
 * The gate of a workflow's runs (issue 19): how many run at once
 * (`settings.concurrency`, per value of `settings.concurrency_key` when one is
 * given) and how many start per window (`settings.rate_limit`). Events over
 * the gate wait, durably, in the store (migration 0025): a waiting line per
 * key, admitted in arrival order as slots free, and throttled admissions are
 * given a due time the queue holds them until.
 */

/** At most this many runs at once of one workflow (or key): above it, the gate is pointless. */
export const MAX_CONCURRENCY = 1_000;
/** At most this many runs per window: the window's start times are kept in one row. */
export const MAX_RATE_RUNS = 1_000;
/** The longest window of a rate limit: one day. */
export const MAX_RATE_SECONDS = 86_400;

export interface RateLimit {
  runs: number;
  perSeconds: number;
}

/** A workflow's gate as the settings give it; null parts are not gated. */
export interface RunGate {
  concurrency: number | null;
  /** The `{{ }}` expression whose value picks the line (only with concurrency). */
  concurrencyKey: string | null;
  rateLimit: RateLimit | null;
}

/** The key of the line of events whose key expression did not evaluate (a missing field), and of a workflow without a key. */
export const NO_KEY = "";

export function validateConcurrency(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_CONCURRENCY) {
    throw new ValidationError("settings.concurrency", `settings.concurrency must be a whole number from 1 to ${MAX_CONCURRENCY} (1: one run at a time, in the order events arrived); got ${describeValue(value)}. Leave it out for no limit.`);
  }
  return value;
}

/** One `{{ }}` path over the trigger's event, such as `{{ steps.trigger.event.body.customer_id }}`. */
export function validateConcurrencyKey(value: unknown, concurrency: number | undefined): string {
  const field = "settings.concurrency_key";
  if (concurrency === undefined) throw new ValidationError(field, `${field} picks the line runs wait in under settings.concurrency: give settings.concurrency with it (1 for one run at a time per key).`);
  if (typeof value !== "string" || value.trim() === "") throw new ValidationError(field, `${field} must be one expression such as "{{ steps.trigger.event.body.customer_id }}"; got ${describeValue(value)}.`);
  let path: PathSegment[];
  try {
    path = keyPathOf(value);
  } catch (error) {
    throw new ValidationError(field, `${field}: ${(error as Error).message}.`);
  }
  if (path[0] !== "steps" || path[1] !== "trigger" || path[2] !== "event") {
    throw new ValidationError(field, `${field} may read only the trigger's event (it is evaluated when the event arrives, before any step runs): start it with steps.trigger.event; got "${value}".`);
  }
  return value.trim();
}

export function validateRateLimit(value: unknown): RateLimit {
  const field = "settings.rate_limit";
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new ValidationError(field, `${field} must be an object such as {"runs": 10, "per_seconds": 60}; got ${describeValue(value)}.`);
  const { runs, per_seconds: perSeconds } = value as Record<string, unknown>;
  if (typeof runs !== "number" || !Number.isInteger(runs) || runs < 1 || runs > MAX_RATE_RUNS) {
    throw new ValidationError(`${field}.runs`, `${field}.runs must be a whole number from 1 to ${MAX_RATE_RUNS}; got ${describeValue(runs)}.`);
  }
  if (typeof perSeconds !== "number" || !Number.isInteger(perSeconds) || perSeconds < 1 || perSeconds > MAX_RATE_SECONDS) {
    throw new ValidationError(`${field}.per_seconds`, `${field}.per_seconds must be a whole number of seconds from 1 to ${MAX_RATE_SECONDS}; got ${describeValue(perSeconds)}.`);
  }
  return { runs, perSeconds };
}

/** The path of a key expression: exactly one `{{ }}` and nothing else; throws a sentence saying what is wrong. */
export function keyPathOf(expression: string): PathSegment[] {
  const parsed = parseTemplate(expression.trim());
  const only = parsed.parts[0];
  if (!parsed.whole || parsed.parts.length !== 1 || !only || !("path" in only)) throw new Error(`give one {{ }} expression and nothing around it; got "${expression}"`);
  return only.path;
}

/**
 * The line an event waits in: its key's value as JSON, or NO_KEY when the
 * workflow has no key or the expression does not evaluate (a missing field:
 * such events share one line). Evaluated on the host, paths only.
 */
export function gateKeyOf(expression: string | null, event: unknown): string {
  if (expression === null) return NO_KEY;
  let value: unknown;
  try {
    value = lookup({ steps: { trigger: { event } } }, keyPathOf(expression));
  } catch {
    return NO_KEY;
  }
  if (value === undefined || value === null) return NO_KEY;
  return JSON.stringify(value);
}

/**
 * When the next run may start under `runs` per `perMs`, given the start
 * times admitted last (ascending, at most `runs`): now, unless `runs` were
 * admitted within the window before it, then when the oldest of them leaves
 * it. Answers the time and the start times to keep.
 */
export function nextRateSlot(recent: number[], limit: { runs: number; perMs: number }, now: number): { at: number; recent: number[] } {
  const kept = recent.slice(-limit.runs);
  const at = kept.length < limit.runs ? now : Math.max(now, kept[0]! + limit.perMs);
  return { at, recent: [...kept, at].slice(-limit.runs) };
}


/** settings.concurrency, concurrency_key and rate_limit as the API gives them; left out when not set. */
export function gateSettingsView(settings: WorkflowSettings): { concurrency?: number; concurrency_key?: string; rate_limit?: { runs: number; per_seconds: number } } {
  return {
    ...(settings.concurrency !== undefined ? { concurrency: settings.concurrency } : {}),
    ...(settings.concurrencyKey !== undefined ? { concurrency_key: settings.concurrencyKey } : {}),
    ...(settings.rateLimit ? { rate_limit: { runs: settings.rateLimit.runs, per_seconds: settings.rateLimit.perSeconds } } : {}),
  };
}

/** The gate of a workflow's settings; null when it has none. */
export function gateOf(settings: WorkflowSettings): RunGate | null {
  if (settings.concurrency === undefined && !settings.rateLimit) return null;
  return { concurrency: settings.concurrency ?? null, concurrencyKey: settings.concurrencyKey ?? null, rateLimit: settings.rateLimit ?? null };
}

/** What waits at a workflow's gate (see Store.gateStats). */
export interface GateStats {
  /** Events waiting in the workflow's lines for a free slot (concurrency). */
  waiting: number;
  /** Admitted runs not yet recorded as ended: the slots taken. */
  inFlight: number;
  /** Admitted runs held back by the rate limit until their due time. */
  throttled: number;
  /** When the oldest waiting or throttled event arrived (epoch ms); null when none waits. */
  oldestWaitingSince: number | null;
  /** When the next throttled run may start (epoch ms); null when none is throttled. */
  nextStartAt: number | null;
}

/** One event waiting in its line at a workflow's gate (see Store.listWaiting). */
export interface WaitingEvent {
  eventId: string;
  emitterId: string;
  /** The value of settings.concurrency_key the event's line is for; null for the shared line (no key, or the key missing). */
  key: unknown;
  /** Its place in its line: 1 is admitted next. */
  position: number;
  /** When it arrived (epoch ms). */
  waitingSince: number;
}

/** The value of a line's stored key (JSON, or NO_KEY: null). */
export function keyValueOf(gateKey: string): unknown {
  return gateKey === NO_KEY ? null : JSON.parse(gateKey);
}

/**
 * The run of an event cancelled while it waited at a gate (never run): no
 * steps, started and ended at the cancel. The store records it for a
 * waiting event; a chain records it for a follower it held (the cancel is
 * answered with it first).
 */
export function cancelledWaitingRun(event: { id: string; ownerId: string; workflowId: string; emitterId: string; eventId: string; triggerEvent: unknown }, at: number, cancelledBy?: string): WorkflowRun {
  return { ...event, status: "cancelled", steps: [], error: null, exitReason: null, replayOf: null, startedAt: at, finishedAt: at, durationMs: 0, ...(cancelledBy !== undefined ? { cancelledBy } : {}) };
}
