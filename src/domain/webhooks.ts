/**
 * Webhooks: URLs of the user's own that a subscription delivers events to
 * (a listener `wh_…`, as in the hosted API). Each event is POSTed as JSON,
 * signed with the webhook's secret, retried with exponential backoff up to
 * a bounded number of attempts, and recorded per (webhook, event).
 */
import { createHmac } from "node:crypto";

export interface Webhook {
  id: string; // wh_…
  ownerId: string;
  name: string | null;
  description: string | null;
  url: string;
  /** The signing secret, sealed at rest (SecretBox); shown to its owner once, at creation. */
  secret: string;
  active: boolean;
  createdAt: number;
  updatedAt: number;
}

export type WebhookDeliveryStatus = "retrying" | "delivered" | "failed";

/** What became of one event sent to one webhook: the latest attempt's outcome. */
export interface WebhookDelivery {
  id: string; // whd_…
  ownerId: string;
  webhookId: string;
  emitterId: string;
  eventId: string;
  channel: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** The receiver's HTTP status of the last attempt; null when none answered. */
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  deliveredAt: number | null;
}

/** Headers every delivery carries (the receiver's side of the contract; documented in docs/workflows.md). */
export const WEBHOOK_HEADERS = {
  signature: "x-runnel-signature",
  idempotencyKey: "idempotency-key",
  webhookId: "x-runnel-webhook-id",
  emitterId: "x-runnel-emitter-id",
  eventId: "x-runnel-event-id",
  channel: "x-runnel-channel",
  attempt: "x-runnel-attempt",
} as const;

/**
 * `sha256=<hex HMAC-SHA256 of the body>` with the webhook's secret: the
 * receiver computes the same over the raw body and compares (in constant time).
 */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** The same for every attempt of one event to one webhook: a receiver that saw it already can skip it. */
export function webhookIdempotencyKey(webhookId: string, emitterId: string, eventId: string): string {
  return `${webhookId}:${emitterId}:${eventId}`;
}

/**
 * How long to wait after failed attempt `attempt` (1-based): `baseMs` doubled
 * per attempt, at most an hour; null once `maxAttempts` are spent.
 */
export function webhookRetryDelay(attempt: number, policy: WebhookRetryPolicy): number | null {
  if (attempt >= policy.maxAttempts) return null;
  return Math.min(3_600_000, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}

export interface WebhookRetryPolicy {
  /** Attempts per event in all (RUNNEL_WEBHOOK_MAX_ATTEMPTS, default 8). */
  maxAttempts: number;
  /** Wait after the first failure, doubled after each (RUNNEL_WEBHOOK_RETRY_BASE_MS, default 10 s). */
  baseDelayMs: number;
}

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = { maxAttempts: 8, baseDelayMs: 10_000 };
