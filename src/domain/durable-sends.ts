/**
 * Durable `$.send.*`: the sends of a recorded run wait in the send outbox,
 * written in the transaction that records the run, until they are carried
 * out; a failed attempt is tried again after a backoff, up to a bounded
 * number of attempts, each with the same idempotency key so that a receiver
 * that honours it acts once even when an attempt is repeated (a crash after
 * the request went out, before its outcome was written).
 */
import type { SourceType } from "./error-events.js";

/** Destinations that go through the outbox; `emit` is appended in the run's own transaction. */
export type OutboxSendType = "http" | "email" | "s3" | "sse";

/**
 * What the final failure of a send needs to become a `$errors` event of its
 * workflow (the run's trigger event, for a replay), kept with the send since
 * the run record may be trimmed before the last attempt.
 */
export interface SendErrorContext {
  /** The id of the step that made the send (`c_…`): the error's cellId. */
  cellId: string;
  originalEvent: unknown;
  originalEventId: string;
  originalEventAtMs: number;
  sourceType: SourceType;
  /** The run handled an error itself: its failures are routed nowhere (no loops). */
  handlingError: boolean;
}

/** A send of a recorded run, as the outbox keeps it. */
export interface OutboxSend {
  /** The idempotency key, and the row's key: `<run id>:<step position>:<send position>`. */
  id: string;
  ownerId: string;
  workflowId: string;
  runId: string;
  /** The step's position in the run record and the send's in that step (for the run's send records). */
  step: number;
  send: number;
  type: OutboxSendType;
  payload: unknown;
  context: SendErrorContext;
  /** Attempts made so far, this one included once claimed. */
  attempts: number;
  /** When the send is due (its next attempt, or when a claimer's lease runs out). */
  availableAt: number;
  /** The last failed attempt's message; null before any. */
  lastError: string | null;
  createdAt: number;
}

export type NewOutboxSend = Omit<OutboxSend, "attempts" | "lastError">;

/**
 * The key of one send: the same at every attempt, unique per (run, step,
 * send). A run's id is recorded once (a second claimer of its delivery
 * records nothing, so enqueues nothing), so the key names one send for good.
 */
export function sendIdempotencyKey(runId: string, step: number, send: number): string {
  return `${runId}:${step}:${send}`;
}

export interface SendRetryPolicy {
  /** Attempts per send in all (RUNNEL_SEND_MAX_ATTEMPTS, default 8). */
  maxAttempts: number;
  /** Wait after the first failure, doubled after each (RUNNEL_SEND_RETRY_BASE_MS, default 10 s). */
  baseDelayMs: number;
}

export const DEFAULT_SEND_RETRY: SendRetryPolicy = { maxAttempts: 8, baseDelayMs: 10_000 };

/** The longest wait between two attempts. */
export const MAX_SEND_RETRY_DELAY_MS = 3_600_000;

/** How long to wait after failed attempt `attempt` (1-based): doubled per attempt, at most an hour; null once the attempts are spent. */
export function sendRetryDelay(attempt: number, policy: SendRetryPolicy): number | null {
  if (attempt >= policy.maxAttempts) return null;
  return Math.min(MAX_SEND_RETRY_DELAY_MS, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}

/** How an attempt ended, for Store.settleSend. */
export type SendSettlement =
  | { outcome: "delivered"; detail: string | null }
  /** Failed, tried again at `retryAt`. */
  | { outcome: "retry"; error: string; retryAt: number }
  /** Failed for the last time: the send record says failed, and the workflow gets a DestinationFailed error. */
  | { outcome: "failed"; error: string };

/** The header a `$.send.http` request carries its idempotency key in (as webhooks do). */
export const SEND_IDEMPOTENCY_HEADER = "idempotency-key";
