import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";

/**
 * Retries of a failed step (`settings.retries`, or a step's own `retries`):
 * while attempts remain, the run stops at the failed step and resumes there
 * after the backoff, with the results of the steps before it kept.
 */
export interface RetryPolicy {
  /** Retries after the first attempt (0: none). */
  max: number;
  backoff: "fixed" | "exponential";
  /** The wait before the first retry; "exponential" doubles it for each later one. */
  delayMs: number;
  /** The longest wait between two attempts. */
  maxDelayMs: number;
}

/** The most retries a step may have. */
export const MAX_RETRIES = 100;
/**
 * The longest a run may wait between two attempts: the window a waiting
 * delivery is kept in (BullMQ keeps a failed job 7 days; the same bound
 * holds for the embedded queue so that a workflow behaves the same in both).
 */
export const RETRY_WINDOW_MS = 7 * 86_400_000;
/** Jitter: each wait is the computed one times a factor drawn from 1 ± this. */
export const RETRY_JITTER = 0.2;

const DEFAULT_DELAY_MS = 1_000;
const DEFAULT_MAX_DELAY_MS = 3_600_000;
const KEYS = ["max", "backoff", "delay_ms", "max_delay_ms"];

/** `retries` as the API takes it (snake_case), checked; every error names the field (`settings.retries.max`). */
export function validateRetryPolicy(value: unknown, field: string): RetryPolicy {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new ValidationError(field, `${field} must be an object like {"max": 3, "backoff": "exponential", "delay_ms": 1000}; got ${describeValue(value)}.`);
  }
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!KEYS.includes(key)) throw new ValidationError(`${field}.${key}`, `${field}.${key} is not a retry setting; the settings are ${KEYS.join(", ")}.`);
  }
  const max = input.max ?? 3;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 0 || max > MAX_RETRIES) {
    throw new ValidationError(`${field}.max`, `${field}.max must be a whole number of retries from 0 to ${MAX_RETRIES}; got ${describeValue(max)}.`);
  }
  const backoff = input.backoff ?? "exponential";
  if (backoff !== "fixed" && backoff !== "exponential") {
    throw new ValidationError(`${field}.backoff`, `${field}.backoff must be "fixed" or "exponential"; got ${describeValue(backoff)}.`, { allowed: ["fixed", "exponential"] });
  }
  const delayMs = milliseconds(input.delay_ms ?? DEFAULT_DELAY_MS, `${field}.delay_ms`);
  const maxDelayMs = milliseconds(input.max_delay_ms ?? Math.max(delayMs, Math.min(DEFAULT_MAX_DELAY_MS, RETRY_WINDOW_MS)), `${field}.max_delay_ms`);
  if (maxDelayMs < delayMs) {
    throw new ValidationError(`${field}.max_delay_ms`, `${field}.max_delay_ms (${maxDelayMs}) must be at least ${field}.delay_ms (${delayMs}).`);
  }
  return { max, backoff, delayMs, maxDelayMs };
}

function milliseconds(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > RETRY_WINDOW_MS) {
    throw new ValidationError(field, `${field} must be a whole number of milliseconds from 0 to ${RETRY_WINDOW_MS} (7 days, the longest a run waits between attempts); got ${describeValue(value)}.`);
  }
  return value;
}

/** The policy as the API shows it (snake_case, as it is given). */
export function retryPolicyView(policy: RetryPolicy): { max: number; backoff: "fixed" | "exponential"; delay_ms: number; max_delay_ms: number } {
  return { max: policy.max, backoff: policy.backoff, delay_ms: policy.delayMs, max_delay_ms: policy.maxDelayMs };
}

/**
 * The wait after failed attempt `attempt` (1 for the first) before the next:
 * `delay_ms`, doubled per attempt when exponential, times a jitter factor in
 * 1 ± RETRY_JITTER (so that runs failing together do not retry together),
 * never past `max_delay_ms`. `random` in [0, 1).
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: number = Math.random()): number {
  const base = policy.backoff === "fixed" ? policy.delayMs : policy.delayMs * 2 ** Math.min(attempt - 1, 40);
  const jittered = base * (1 + RETRY_JITTER * (2 * random - 1));
  return Math.round(Math.min(policy.maxDelayMs, Math.max(0, jittered)));
}

/** What a step's error says of itself: its code and name, and `retryable` when the thrown error had one. */
export interface RetryableCheck {
  code: string;
  name: string;
  retryable?: boolean | undefined;
}

/**
 * Whether a failed attempt may be tried again: what the error says
 * (`error.retryable = false` or `true` on what the step threw) wins;
 * otherwise every error but a configuration or account problem (no retry
 * fixes those) and a run that kept crashing its process.
 */
export function isRetryable(error: RetryableCheck): boolean {
  if (typeof error.retryable === "boolean") return error.retryable;
  if (error.code === "ConfigurationError" || error.code === "AuthError" || error.code === "RepeatedCrash") return false;
  // Components throw the platform's ConfigurationError class (a UserError by its code): the same meaning.
  return error.name !== "ConfigurationError";
}

/** One failed attempt of a run, as the run shows it. */
export interface RunAttempt {
  /** The try of the failed step this was (1: its first). */
  attempt: number;
  stepId: string;
  stepName: string;
  code: string;
  msg: string;
  failedAt: number;
  willRetry: boolean;
  /** When the next attempt is due (epoch ms), or null when none follows. */
  nextAttemptAt: number | null;
}
