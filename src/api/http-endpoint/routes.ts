import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { SourceFailedError } from "../../domain/errors.js";
import { describeError } from "../../engine/source-invoker.js";
import type { SourcesService, WorkflowEnd } from "../../engine/sources-service.js";
import type { HttpResponse } from "../../sandbox/http-response.js";

/** The hosted service's limit on a request to a source's endpoint. */
export const ENDPOINT_BODY_LIMIT_BYTES = 512 * 1024;
export const ENDPOINT_PREFIX = "/e";

/**
 * The public endpoints of sources with an HTTP interface: `/e/<token>` and any
 * path below it, any method, any body. No API key: the unguessable token is
 * the address. The caller is answered once the events are durable, or by the
 * component itself when it asked for customResponse.
 */
export const httpEndpointRoutes: FastifyPluginAsync<{ sources: SourcesService }> = async (app, { sources }) => {
  // Bodies reach the source as they came (bodyRaw), as text: the runner parses `body` from it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string", bodyLimit: ENDPOINT_BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));

  const handle = async (request: FastifyRequest<{ Params: { token: string; "*"?: string } }>, reply: FastifyReply) => {
    const bodyRaw = typeof request.body === "string" ? request.body : "";
    const event = {
      method: request.method,
      path: `/${request.params["*"] ?? ""}`,
      query: { ...(request.query as Record<string, unknown>) },
      headers: { ...request.headers },
      bodyRaw,
    };
    const respond = (response: HttpResponse) => {
      if (reply.sent) return;
      reply.code(response.status).headers(response.headers);
      void reply.send(response.body === null ? "" : Buffer.isBuffer(response.body) || typeof response.body === "string" ? response.body : Buffer.from(response.body));
    };
    const { customResponse, result, workflowEnd } = await sources.handleHttp(request.params.token, event, respond);
    if (reply.sent) return reply;
    if (workflowEnd) return answerFromWorkflow(workflowEnd, respond, reply);
    if (!result.ok) {
      throw new SourceFailedError(`The source could not handle the request: ${result.error ? describeError(result.error).split("\n")[0] : "unknown error"}. Its owner can see why in its logs.`, {
        code: result.error?.code,
      });
    }
    if (customResponse) {
      throw new SourceFailedError("The source finished without answering: its run must call this.http.respond({ status, body }) when customResponse is set.");
    }
    // Written as text: the hottest answer of the server skips the serializer.
    return reply.code(200).type("application/json; charset=utf-8").send(`{"success":true,"events":${result.events.length}}`);
  };

  // Left out of the OpenAPI document: these are the sources' own addresses, not the API, and
  // `all` includes methods (QUERY) that OpenAPI cannot describe.
  app.all("/:token", { schema: { hide: true } }, handle);
  app.all("/:token/*", { schema: { hide: true } }, handle);
};

/** The answer of a workflow that responds itself: its $.respond, or why there is none. */
function answerFromWorkflow(end: WorkflowEnd, respond: (response: HttpResponse) => void, reply: FastifyReply) {
  if (end.kind === "response") {
    respond(end.response);
    return reply;
  }
  if (end.kind === "timeout") throw new SourceFailedError(`The workflow did not call $.respond() within ${end.seconds} s; its runs show what it did.`);
  throw new SourceFailedError(
    end.status === "error" ? `${end.message}. Its owner can see why in its $errors.` : `${end.message} A workflow set to respond itself must call $.respond({ status, body }).`,
  );
}
