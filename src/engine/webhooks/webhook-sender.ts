/**
 * The webhook side of the delivery worker: each delivery to a `wh_…`
 * listener is POSTed to the webhook's URL as JSON (the event), signed, under
 * the server's network policy (checked on the address connected to, at each
 * attempt). The attempt's outcome and the delivery's next step (removed, or
 * due again after a backoff) are written in one transaction.
 */
import type { Logger } from "pino";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { newId } from "../../domain/ids.js";
import { WEBHOOK_HEADERS, webhookIdempotencyKey, webhookRetryDelay, webhookSignature, type Webhook, type WebhookDelivery, type WebhookRetryPolicy } from "../../domain/webhooks.js";
import type { ClaimedDelivery, Store } from "../../store/store.js";
import { RUNNEL_VERSION } from "../../version.js";
import { egressRequest } from "../network/egress-request.js";
import type { SecretBox } from "../secrets.js";
import type { ListenerRetry } from "../workflows/delivery-worker.js";

export interface WebhookSenderOptions {
  store: Store;
  secrets: SecretBox;
  egressPolicy: EgressPolicy | null;
  retry: WebhookRetryPolicy;
  logger: Logger;
  /** How long a receiver may take to answer. Default 10 s. */
  timeoutMs?: number;
  now?: () => number;
}

/** A receiver's error text kept at most this long in the record. */
const MAX_ERROR_LENGTH = 500;

export class WebhookSender {
  private readonly now: () => number;

  constructor(private readonly options: WebhookSenderOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Sends one listener's deliveries, in order; answers those to try again (the one that failed and the rest), recorded so in the store. */
  async run(deliveries: ClaimedDelivery[]): Promise<ListenerRetry | void> {
    const first = deliveries[0]!;
    const webhook = await this.options.store.findWebhook(first.ownerId, first.listenerId);
    if (!webhook || !webhook.active) {
      // Deleted (its deliveries went with it) or paused: nothing is sent.
      await this.options.store.dropDeliveries(deliveries);
      return;
    }
    const secret = this.options.secrets.open(webhook.secret);
    for (const [index, delivery] of deliveries.entries()) {
      const retryAt = await this.send(webhook, secret, delivery);
      if (retryAt === null) continue;
      // The receiver failed (or hung for the whole timeout): the rest would meet the same one. They wait
      // for the same retry, counted as tried, rather than each holding the group for another timeout.
      const rest = deliveries.slice(index + 1);
      if (rest.length > 0) await this.options.store.releaseDeliveries(rest, retryAt);
      // A queue whose jobs are not the store's rows (BullMQ) puts them back itself.
      return { deliveries: deliveries.slice(index), retryAt };
    }
  }

  /** Sends one delivery and records the attempt; answers when to try again after a failure (null: delivered, or given up). */
  private async send(webhook: Webhook, secret: string, delivery: ClaimedDelivery): Promise<number | null> {
    const body = JSON.stringify(delivery.event ?? null);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const answer = await egressRequest({
        method: "POST",
        url: new URL(webhook.url),
        headers: {
          "content-type": "application/json",
          "user-agent": `Runnel/${RUNNEL_VERSION}`,
          [WEBHOOK_HEADERS.signature]: webhookSignature(secret, body),
          [WEBHOOK_HEADERS.idempotencyKey]: webhookIdempotencyKey(webhook.id, delivery.emitterId, delivery.eventId),
          [WEBHOOK_HEADERS.webhookId]: webhook.id,
          [WEBHOOK_HEADERS.emitterId]: delivery.emitterId,
          [WEBHOOK_HEADERS.eventId]: delivery.eventId,
          [WEBHOOK_HEADERS.channel]: delivery.channel,
          [WEBHOOK_HEADERS.attempt]: String(delivery.attempts),
        },
        body,
        timeoutMs: this.options.timeoutMs ?? 10_000,
        policy: this.options.egressPolicy,
      });
      status = answer.status;
      if (status < 200 || status >= 300) error = `The receiver answered HTTP ${status}.`;
    } catch (thrown) {
      error = (thrown instanceof Error ? thrown.message : String(thrown)).slice(0, MAX_ERROR_LENGTH);
    }
    const now = this.now();
    const delay = error === null ? null : webhookRetryDelay(delivery.attempts, this.options.retry);
    const record: WebhookDelivery = {
      id: newId("webhookDelivery", delivery.createdAt),
      ownerId: webhook.ownerId,
      webhookId: webhook.id,
      emitterId: delivery.emitterId,
      eventId: delivery.eventId,
      channel: delivery.channel,
      status: error === null ? "delivered" : delay === null ? "failed" : "retrying",
      attempts: delivery.attempts,
      lastStatus: status,
      lastError: error,
      createdAt: delivery.createdAt,
      updatedAt: now,
      deliveredAt: error === null ? now : null,
    };
    if (record.status === "failed") this.options.logger.info({ webhookId: webhook.id, eventId: delivery.eventId, attempts: delivery.attempts, error }, "a webhook delivery was given up");
    const retryAt = delay === null ? null : now + delay;
    await this.options.store.recordWebhookAttempt(record, retryAt);
    return retryAt;
  }
}
