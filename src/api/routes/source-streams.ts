import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { LogEntry, StoredEvent } from "../../domain/sources.js";
import type { HubMessage } from "../../engine/event-hub.js";
import type { SourcesService } from "../../engine/sources/service.js";
import { principalOf } from "../request-context.js";
import { toEventSummary, toLogView } from "../schemas/sources.js";
import type { SseStream, SseStreams } from "../sse.js";

/** The last message of a stream. Channel names cannot start with `$`, so it never clashes with one. */
export const STREAM_CLOSED_EVENT = "$closed";

const IdParams = Type.Object({ id: Type.String({ description: "dc_… or the name slug" }) });

interface StreamOptions {
  sources: SourcesService;
  streams: SseStreams;
}

type Sender = (stream: SseStream, message: Exclude<HubMessage, { kind: "closed" }>) => void;

/** One SSE message per emitted event: its summary with the event, `event:` the channel. */
const sendEmits: Sender = (stream, message) => {
  if (message.kind !== "event") return;
  const summary = toEventSummary(message.item as StoredEvent, true);
  stream.send(summary, message.channel || undefined, summary.id);
};

/** One SSE message per log line, `event: log`. */
const sendLogs: Sender = (stream, message) => {
  if (message.kind !== "log") return;
  const log = toLogView(message.item as LogEntry);
  stream.send(log, "log", log.id);
};

/** Streams what the hub says of one source, turned into SSE messages by `send`, until it is deleted or the client goes. */
async function follow(sources: SourcesService, streams: SseStreams, request: FastifyRequest, reply: FastifyReply, idOrSlug: string, send: Sender): Promise<void> {
  let stream: SseStream | undefined;
  const following = await sources.follow(principalOf(request).user.id, idOrSlug, (message) => {
    if (!stream) return;
    if (message.kind !== "closed") return send(stream, message);
    stream.send({ reason: message.reason }, STREAM_CLOSED_EVENT);
    stream.close();
  });
  stream = streams.start(request, reply);
  await stream.closed;
  following.stop();
}

/** A source's live streams under /v1: its events and its logs. */
export const sourceStreamsRoutes: FastifyPluginAsyncTypebox<StreamOptions> = async (app, { sources, streams }) => {
  app.get(
    "/sources/:id/sse",
    { schema: { tags: ["events"], summary: "Server-sent events: one message per emitted event; `event:` is the channel", params: IdParams } },
    (request, reply) => follow(sources, streams, request, reply, request.params.id, sendEmits),
  );

  app.get(
    "/sources/:id/logs/sse",
    { schema: { tags: ["events"], summary: "Server-sent events: the source's logs as they are written", params: IdParams } },
    (request, reply) => follow(sources, streams, request, reply, request.params.id, sendLogs),
  );
};

/**
 * The same two streams where the hosted service serves them (its `pd list
 * streams` prints `…/sse/<dc_id>/emits`, and its docs say to swap `emits`
 * for `observations` to get the logs), registered under `/sse` with the
 * same Bearer key. `/sse/dc/<id>/…` is taken as well, for clients that
 * build the URL from the kind and the id.
 */
export const documentedStreamsRoutes: FastifyPluginAsyncTypebox<StreamOptions> = async (app, { sources, streams }) => {
  for (const path of ["/:id/emits", "/dc/:id/emits"]) {
    app.get(
      path,
      { schema: { tags: ["events"], summary: "The hosted API's address of GET /v1/sources/<id>/sse: one message per emitted event", params: IdParams } },
      (request, reply) => follow(sources, streams, request, reply, request.params.id, sendEmits),
    );
  }
  for (const path of ["/:id/observations", "/dc/:id/observations"]) {
    app.get(
      path,
      { schema: { tags: ["events"], summary: "The hosted API's address of GET /v1/sources/<id>/logs/sse: the source's logs as they are written", params: IdParams } },
      (request, reply) => follow(sources, streams, request, reply, request.params.id, sendLogs),
    );
  }
};
