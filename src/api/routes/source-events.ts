import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { ValidationError } from "../../domain/errors.js";
import { parseEventId } from "../../domain/event-ids.js";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import type { LogEntry, StoredEvent } from "../../domain/sources.js";
import type { SourcesService } from "../../engine/sources/service.js";
import { principalOf } from "../request-context.js";
import { DataSchema, errorResponses, PageQuerySchema, PageSchema } from "../schemas/common.js";
import { PropOptionsSchema } from "../schemas/prop-options.js";
import { EventSummarySchema, LogSchema, toEventSummary, toLogView } from "../schemas/sources.js";

const IdParams = Type.Object({ id: Type.String() });

/** A source's events and logs: pages, deletion, manual runs and prop options (live streams: source-streams.ts). */
export const sourceEventsRoutes: FastifyPluginAsyncTypebox<{ sources: SourcesService }> = async (app, { sources }) => {
  app.get(
    "/sources/:id/event_summaries",
    {
      schema: {
        tags: ["events"],
        summary: "The source's most recent events, newest first",
        params: IdParams,
        querystring: Type.Object(
          {
            ...PageQuerySchema.properties,
            expand: Type.Optional(Type.Literal("event", { description: "`event`: include full event bodies (else bodies over 1 KB are left out)" })),
            event_name: Type.Optional(Type.String({ description: "Only this channel (empty: the default channel)" })),
          },
          { additionalProperties: false },
        ),
        response: { 200: PageSchema(EventSummarySchema), ...errorResponses },
      },
    },
    async (request) => {
      const { expand, event_name, ...paging } = request.query;
      const page = parsePageRequest(paging);
      checkCursor(page.before, "before");
      checkCursor(page.after, "after");
      const slice = await sources.events(principalOf(request).user.id, request.params.id, { channel: event_name ?? null, page });
      const summaries = slice.items.map((event: StoredEvent) => toEventSummary(event, expand === "event"));
      return toPage({ items: summaries, totalCount: slice.totalCount }, (item) => item.id);
    },
  );

  app.delete(
    "/sources/:id/events",
    {
      schema: {
        tags: ["events"],
        summary: "Delete events in an inclusive id range; without start_id and end_id, all of them; with event_name, of that channel only",
        params: IdParams,
        querystring: Type.Object(
          {
            start_id: Type.Optional(Type.String()),
            end_id: Type.Optional(Type.String()),
            event_name: Type.Optional(Type.String({ description: "Only this channel's events (empty: the default channel)" })),
          },
          { additionalProperties: false },
        ),
        response: { 202: Type.Object({ deleted: Type.Integer() }), ...errorResponses },
      },
    },
    async (request, reply) => {
      checkCursor(request.query.start_id, "start_id");
      checkCursor(request.query.end_id, "end_id");
      const { start_id: startId, end_id: endId, event_name: channel } = request.query;
      const deleted = await sources.deleteEvents(principalOf(request).user.id, request.params.id, { startId, endId, channel });
      return reply.code(202).send({ deleted });
    },
  );

  app.get(
    "/sources/:id/logs",
    {
      schema: {
        tags: ["events"],
        summary: "What run, hooks and methods printed, and every error with its stack; newest first",
        params: IdParams,
        querystring: PageQuerySchema,
        response: { 200: PageSchema(LogSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = parsePageRequest(request.query);
      checkCursor(page.before, "before");
      checkCursor(page.after, "after");
      const slice = await sources.logs(principalOf(request).user.id, request.params.id, page);
      return toPage({ items: slice.items.map(toLogView), totalCount: slice.totalCount }, (item) => item.id);
    },
  );

  app.post(
    "/sources/:id/run",
    {
      schema: {
        tags: ["sources"],
        summary: "Run now: invokes run (a timer source with a timer event) and answers once its events are stored",
        params: IdParams,
        body: Type.Optional(Type.Object({ event: Type.Optional(Type.Unknown()) }, { additionalProperties: false })),
        response: {
          200: DataSchema(
            Type.Object({
              ok: Type.Boolean(),
              duration_ms: Type.Number(),
              events: Type.Array(EventSummarySchema),
              error: Type.Optional(Type.Object({ code: Type.String(), name: Type.String(), message: Type.String(), stack: Type.Optional(Type.String()) })),
            }),
          ),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const result = await sources.runNow(principalOf(request).user.id, request.params.id, request.body?.event);
      const events = result.events.map((event) => toEventSummary(event, true));
      return { data: { ok: result.ok, duration_ms: result.durationMs, events, ...(result.error ? { error: result.error } : {}) } };
    },
  );

  app.post(
    "/sources/:id/props/:prop/options",
    {
      schema: {
        tags: ["sources"],
        summary: "A prop's options: static ones, or what its async options method returns for this page and query",
        params: Type.Object({ id: Type.String(), prop: Type.String() }),
        body: Type.Optional(
          Type.Object(
            { page: Type.Optional(Type.Integer({ minimum: 0 })), prevContext: Type.Optional(Type.Unknown()), query: Type.Optional(Type.String()) },
            { additionalProperties: false },
          ),
        ),
        response: { 200: DataSchema(PropOptionsSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { id, prop } = request.params;
      return { data: await sources.propOptions(principalOf(request).user.id, id, prop, request.body ?? {}) };
    },
  );
};

export function checkCursor(value: string | undefined, field: string): void {
  if (value !== undefined && value !== "" && !parseEventId(value)) {
    throw new ValidationError(field, `${field} must be an event id like 1606511826306-0; got "${value}".`);
  }
}
