import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { windowStart } from "../../domain/activity.js";
import type { Store } from "../../store/store.js";
import { principalOf } from "../request-context.js";
import { ActivityQuerySchema, ActivitySchema, toActivityView } from "../schemas/activity.js";
import { DataSchema, errorResponses } from "../schemas/common.js";

/** What is happening at a glance: the console's home page. */
export const activityRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get(
    "/users/me/activity",
    {
      schema: {
        tags: ["runs"],
        summary: "Your runs, events and failed runs per minute over the last `minutes`, and the workflows failing most",
        querystring: ActivityQuerySchema,
        response: { 200: DataSchema(ActivitySchema), ...errorResponses },
      },
    },
    async (request) => {
      const minutes = request.query.minutes ?? 60;
      const now = Date.now();
      const window = await store.activity(principalOf(request).user.id, windowStart(now, minutes));
      return { data: toActivityView(window, now, minutes) };
    },
  );
};
