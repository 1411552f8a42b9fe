import { Type, type Static } from "@sinclair/typebox";
import type { Webhook, WebhookDelivery } from "../../domain/webhooks.js";
import { toEpochSeconds } from "./common.js";

const WebhookFields = {
  id: Type.String({ description: "wh_…" }),
  user_id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  url: Type.String({ description: "Where each event is POSTed as JSON." }),
  active: Type.Boolean(),
  created_at: Type.Integer({ description: "Epoch seconds." }),
  updated_at: Type.Integer({ description: "Epoch seconds." }),
};

export const WebhookSchema = Type.Object(WebhookFields, { title: "Webhook" });
export type WebhookView = Static<typeof WebhookSchema>;

export const CreatedWebhookSchema = Type.Object(
  {
    ...WebhookFields,
    signing_secret: Type.String({
      description: "Signs every delivery (X-Runnel-Signature: sha256=<hex HMAC-SHA256 of the body>). Shown here only: keep it now.",
    }),
  },
  { title: "CreatedWebhook" },
);

export type CreatedWebhookView = Static<typeof CreatedWebhookSchema>;

const WebhookInputFields = {
  url: Type.String({ description: "http(s) URL that gets each event; the server's own networks are refused unless RUNNEL_EGRESS_ALLOW lists them" }),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
};
/** POST takes the fields from the query (as the hosted API documents) or from a JSON body. */
export const WebhookQuerySchema = Type.Partial(Type.Object(WebhookInputFields), { additionalProperties: false });
export const WebhookBodySchema = Type.Optional(Type.Partial(Type.Object(WebhookInputFields), { additionalProperties: false, description: "The same fields as the query, as JSON" }));

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ description: "whd_…" }),
    webhook_id: Type.String(),
    emitter_id: Type.String(),
    event_id: Type.String(),
    event_name: Type.String({ description: "The channel the event came from; empty for the default one." }),
    status: Type.Union([Type.Literal("retrying"), Type.Literal("delivered"), Type.Literal("failed")], {
      description: "retrying: an attempt failed and another is due; delivered: a 2xx answered; failed: every attempt failed (RUNNEL_WEBHOOK_MAX_ATTEMPTS).",
    }),
    attempts: Type.Integer(),
    last_status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status of the last attempt; null when none answered." }),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.Integer({ description: "Epoch seconds." }),
    updated_at: Type.Integer({ description: "Epoch seconds." }),
    delivered_at: Type.Union([Type.Integer(), Type.Null()]),
  },
  { title: "WebhookDelivery" },
);

export type WebhookDeliveryView = Static<typeof WebhookDeliverySchema>;

export function toWebhookView(webhook: Webhook): WebhookView {
  return {
    id: webhook.id,
    user_id: webhook.ownerId,
    name: webhook.name,
    description: webhook.description,
    url: webhook.url,
    active: webhook.active,
    created_at: toEpochSeconds(webhook.createdAt),
    updated_at: toEpochSeconds(webhook.updatedAt),
  };
}

export function toWebhookDeliveryView(delivery: WebhookDelivery): WebhookDeliveryView {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    emitter_id: delivery.emitterId,
    event_id: delivery.eventId,
    event_name: delivery.channel,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status: delivery.lastStatus,
    last_error: delivery.lastError,
    created_at: toEpochSeconds(delivery.createdAt),
    updated_at: toEpochSeconds(delivery.updatedAt),
    delivered_at: delivery.deliveredAt === null ? null : toEpochSeconds(delivery.deliveredAt),
  };
}
