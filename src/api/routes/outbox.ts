import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import type { Store } from "../../store/store.js";
import { principalOf } from "../request-context.js";
import { errorResponses, PageQuerySchema, PageSchema } from "../schemas/common.js";
import { OutboxMailSchema, toOutboxMailView } from "../schemas/outbox.js";

/** The caller's outbox: every mail Runnel sent, or tried to, for them. */
export const outboxRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get(
    "/outbox",
    {
      schema: {
        tags: ["outbox"],
        summary: "Your mails (error notifications and $.send.email), newest first, with their delivery status",
        querystring: PageQuerySchema,
        response: { 200: PageSchema(OutboxMailSchema), ...errorResponses },
      },
    },
    async (request) => {
      const slice = await store.listOutbox(principalOf(request).user.id, parsePageRequest(request.query));
      return toPage({ items: slice.items.map(toOutboxMailView), totalCount: slice.totalCount }, (mail) => mail.id);
    },
  );
};
