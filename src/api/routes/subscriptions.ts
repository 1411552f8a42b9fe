import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { ValidationError } from "../../domain/errors.js";
import type { Subscription } from "../../domain/subscriptions.js";
import type { SubscriptionsService } from "../../engine/workflows/subscriptions-service.js";
import { principalOf } from "../request-context.js";
import { checkOwnWorkspace } from "../workspace.js";
import { DataSchema, errorResponses, toEpochSeconds, WorkspaceParams } from "../schemas/common.js";
import { SubscriptionSchema } from "../schemas/workflows.js";

const KeyFields = {
  emitter_id: Type.String({ description: "A workflow (p_…) or source (dc_…) of yours, or p_* / dc_* for all of them" }),
  listener_id: Type.String({ description: "Who gets each event: a workflow (p_…, runs), a source (dc_…, its run gets the event; it may listen to itself) or a webhook (wh_…, the event is POSTed)" }),
  event_name: Type.Optional(Type.String({ description: "A channel: $errors, $logs, a name, or empty for the default channel" })),
};
const KeyQuery = Type.Object(KeyFields, { additionalProperties: false });
/** POST takes the key from the query (as the seed shows) or from a JSON body (as some clients send it). */
const PostQuery = Type.Partial(Type.Object(KeyFields), { additionalProperties: false });
const PostBody = Type.Optional(Type.Partial(Type.Object(KeyFields), { additionalProperties: false, description: "The same fields as the query, for clients that send them as JSON" }));

function toView(subscription: Subscription) {
  return {
    id: subscription.id,
    emitter_id: subscription.emitterId,
    listener_id: subscription.listenerId,
    event_name: subscription.eventName,
    created_at: toEpochSeconds(subscription.createdAt),
  };
}

/** Subscriptions: which of your workflows runs on which channel of which emitter. */
export const subscriptionsRoutes: FastifyPluginAsyncTypebox<{ subscriptions: SubscriptionsService }> = async (app, { subscriptions }) => {
  app.post(
    "/subscriptions",
    {
      schema: {
        tags: ["subscriptions"],
        summary: "Subscribe a workflow to an emitter's channel ($errors: each error of the emitter triggers the listener)",
        querystring: PostQuery,
        body: PostBody,
        response: { 200: DataSchema(SubscriptionSchema), ...errorResponses },
      },
    },
    async (request) => {
      const given = { ...request.query, ...(request.body ?? {}) };
      for (const field of ["emitter_id", "listener_id"] as const) {
        if (typeof given[field] !== "string") throw new ValidationError(field, `${field} is required, in the query string or the JSON body.`);
      }
      const subscription = await subscriptions.subscribe(principalOf(request).user.id, { emitterId: given.emitter_id!, listenerId: given.listener_id!, eventName: given.event_name ?? "" });
      return { data: toView(subscription) };
    },
  );

  app.delete(
    "/subscriptions",
    { schema: { tags: ["subscriptions"], summary: "Remove a subscription", querystring: KeyQuery, response: { 204: Type.Null(), ...errorResponses } } },
    async (request, reply) => {
      const { emitter_id, listener_id, event_name } = request.query;
      await subscriptions.unsubscribe(principalOf(request).user.id, { emitterId: emitter_id, listenerId: listener_id, eventName: event_name ?? "" });
      return reply.code(204).send(null);
    },
  );

  const listOwn = async (request: FastifyRequest) => ({ data: (await subscriptions.list(principalOf(request).user.id)).map(toView) });

  app.get(
    "/users/me/subscriptions",
    { schema: { tags: ["subscriptions"], summary: "Your subscriptions, triggers and $errors ones alike", response: { 200: DataSchema(Type.Array(SubscriptionSchema)), ...errorResponses } } },
    listOwn,
  );

  // The hosted API lists a workspace's subscriptions here; a user's one workspace holds exactly their subscriptions.
  app.get(
    "/workspaces/:org_id/subscriptions",
    {
      schema: {
        tags: ["subscriptions"],
        summary: "Your workspace's subscriptions (o_…, from /users/me/workspaces): the same list as /users/me/subscriptions",
        params: WorkspaceParams,
        response: { 200: DataSchema(Type.Array(SubscriptionSchema)), ...errorResponses },
      },
    },
    async (request) => {
      checkOwnWorkspace(principalOf(request), request.params.org_id);
      return listOwn(request);
    },
  );

  app.post(
    "/auto_subscriptions",
    {
      schema: {
        tags: ["subscriptions"],
        summary: "The listener gets this channel of every workflow and source, including those made later",
        querystring: Type.Object({ listener_id: Type.String(), event_name: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: { 200: DataSchema(Type.Array(SubscriptionSchema)), ...errorResponses },
      },
    },
    async (request) => {
      const made = await subscriptions.autoSubscribe(principalOf(request).user.id, request.query.listener_id, request.query.event_name ?? "");
      return { data: made.map(toView) };
    },
  );
};
