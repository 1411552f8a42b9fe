import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { ValidationError } from "../../domain/errors.js";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import type { WebhooksService } from "../../engine/webhooks/webhooks-service.js";
import { principalOf } from "../request-context.js";
import { DataSchema, errorResponses, PageQuerySchema, PageSchema } from "../schemas/common.js";
import {
  CreatedWebhookSchema,
  toWebhookDeliveryView,
  toWebhookView,
  WebhookBodySchema,
  WebhookDeliverySchema,
  WebhookQuerySchema,
  WebhookSchema,
} from "../schemas/webhooks.js";

const IdParams = Type.Object({ id: Type.String({ description: "wh_…" }) });

/** Webhooks: URLs of yours that subscriptions deliver events to (listener_id wh_…). */
export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  app.post(
    "/webhooks",
    {
      schema: {
        tags: ["webhooks"],
        summary: "Create a webhook; subscribe it to an emitter (POST /v1/subscriptions with listener_id wh_…) to have events POSTed to its URL",
        querystring: WebhookQuerySchema,
        body: WebhookBodySchema,
        response: { 200: DataSchema(CreatedWebhookSchema), ...errorResponses },
      },
    },
    async (request) => {
      const given = { ...request.query, ...(request.body ?? {}) };
      if (typeof given.url !== "string") throw new ValidationError("url", "url is required, in the query string or the JSON body (https://example.com/hook).");
      const { webhook, secret } = await webhooks.create(principalOf(request).user.id, { url: given.url, name: given.name, description: given.description });
      return { data: { ...toWebhookView(webhook), signing_secret: secret } };
    },
  );

  app.get(
    "/webhooks/:id",
    { schema: { tags: ["webhooks"], summary: "One of your webhooks (without its secret)", params: IdParams, response: { 200: DataSchema(WebhookSchema), ...errorResponses } } },
    async (request) => ({ data: toWebhookView(await webhooks.get(principalOf(request).user.id, request.params.id)) }),
  );

  app.delete(
    "/webhooks/:id",
    { schema: { tags: ["webhooks"], summary: "Delete a webhook, its subscriptions and what was waiting to be sent to it", params: IdParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (request, reply) => {
      await webhooks.remove(principalOf(request).user.id, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/users/me/webhooks",
    { schema: { tags: ["webhooks"], summary: "Your webhooks, newest first", querystring: PageQuerySchema, response: { 200: PageSchema(WebhookSchema), ...errorResponses } } },
    async (request) => {
      const slice = await webhooks.list(principalOf(request).user.id, parsePageRequest(request.query));
      return toPage({ items: slice.items.map(toWebhookView), totalCount: slice.totalCount }, (webhook) => webhook.id);
    },
  );

  app.get(
    "/webhooks/:id/deliveries",
    {
      schema: {
        tags: ["webhooks"],
        summary: "What became of each event sent to the webhook (status, attempts, last answer or error), newest first",
        params: IdParams,
        querystring: PageQuerySchema,
        response: { 200: PageSchema(WebhookDeliverySchema), ...errorResponses },
      },
    },
    async (request) => {
      const slice = await webhooks.deliveries(principalOf(request).user.id, request.params.id, parsePageRequest(request.query));
      return toPage({ items: slice.items.map(toWebhookDeliveryView), totalCount: slice.totalCount }, (delivery) => delivery.id);
    },
  );
};
