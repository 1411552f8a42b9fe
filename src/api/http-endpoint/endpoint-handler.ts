import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { MalformedBodyError, SourceFailedError, UnavailableError } from "../../domain/errors.js";
import { describeError } from "../../engine/sources/invoker.js";
import type { HttpHandled, SourcesService, WorkflowEnd } from "../../engine/sources/service.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import { toHttpError } from "../error-mapping.js";
import type { EndpointAddress } from "./endpoint-url.js";
import { isJsonContentType, jsonNestingDepth, MAX_BODY_DEPTH } from "./body-depth.js";
import { answerCustom, answerError, answerStored, canAnswer } from "./endpoint-response.js";
import { BodyTooLargeError, readBodyText } from "./request-body.js";
import { copyOwn } from "../../domain/own-copy.js";

/** The hosted service's limit on a request to a source's endpoint. */
export const ENDPOINT_BODY_LIMIT_BYTES = 512 * 1024;

export interface EndpointHandlerOptions {
  sources: Pick<SourcesService, "handleHttp">;
  logger: Logger;
  /** The server is shutting down: new requests are refused, answers close their connection. */
  isClosing(): boolean;
}

export type EndpointHandler = (request: IncomingMessage, response: ServerResponse, address: EndpointAddress) => void;

/**
 * The public endpoints of sources with an HTTP interface: `/e/<token>` and any
 * path below it, any method, any body. No API key: the unguessable token is
 * the address. The caller is answered once the events are durable, or by the
 * component itself when it asked for customResponse.
 *
 * Served on Node's http request and response directly rather than as a
 * Fastify route: this is the server's hottest path (every webhook), and the
 * framework's request, reply and hook machinery cost about as much CPU as
 * the rest of the request's HTTP handling. The API keeps Fastify.
 */
export function createEndpointHandler(options: EndpointHandlerOptions): EndpointHandler {
  const { sources, logger } = options;
  return (request, response, address) => {
    if (logger.isLevelEnabled("info")) logWhenFinished(logger, request, response, address);
    const fail = (error: unknown) => answerFailure(logger, response, error, options.isClosing());
    if (options.isClosing()) return fail(new UnavailableError("The server is shutting down. Send the request again in a moment."));
    const respond = (answer: HttpResponse) => {
      if (!canAnswer(response)) return;
      try {
        answerCustom(response, answer, options.isClosing());
      } catch (error) {
        fail(error);
      }
    };
    readBodyText(request, ENDPOINT_BODY_LIMIT_BYTES)
      .then((bodyRaw) => {
        // Checked alone, before it joins a batch whose other requests it could fail.
        if (isJsonContentType(request.headers["content-type"]) && jsonNestingDepth(bodyRaw) > MAX_BODY_DEPTH) {
          throw new MalformedBodyError(`The JSON body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep. Send a flatter body.`, { max_depth: MAX_BODY_DEPTH });
        }
        const event = { method: request.method ?? "GET", path: address.path, query: address.query, headers: copyOwn(request.headers), bodyRaw };
        return sources.handleHttp(address.token, event, respond);
      })
      .then((handled) => {
        if (canAnswer(response)) answer(handled, respond, response, options.isClosing());
      })
      .catch(fail);
  };
}

/** What the caller gets once the source's run has ended and its events are stored (or not). */
function answer({ customResponse, result, workflowEnd }: HttpHandled, respond: (answer: HttpResponse) => void, response: ServerResponse, closing: boolean): void {
  if (workflowEnd) return answerFromWorkflow(workflowEnd, respond);
  if (!result.ok) {
    throw new SourceFailedError(`The source could not handle the request: ${result.error ? describeError(result.error).split("\n")[0] : "unknown error"}. Its owner can see why in its logs.`, {
      code: result.error?.code,
    });
  }
  if (customResponse) throw new SourceFailedError("The source finished without answering: its run must call this.http.respond({ status, body }) when customResponse is set.");
  answerStored(response, result.events.length, closing);
}

/**
 * The answer of a workflow that responds itself: its $.respond, or a 502 that
 * says which workflow and step failed and gives the run's id as the error id.
 * The caller is anonymous: the step's message and stack stay with the owner,
 * who finds them under that id (`runnel runs <id>`, GET /v1/runs/<id>).
 */
function answerFromWorkflow(end: WorkflowEnd, respond: (answer: HttpResponse) => void): void {
  if (end.kind === "response") return respond(end.response);
  if (end.kind === "timeout") throw new SourceFailedError(`The workflow did not call $.respond() within ${end.seconds} s; its owner can see what it did in its runs.`);
  const details = { error_id: end.runId, workflow: end.workflowName, ...(end.stepName ? { step: end.stepName } : {}) };
  const lookUp = `its owner finds the details under error id ${end.runId} (runnel runs ${end.runId})`;
  if (end.status === "error") {
    const where = end.stepName ? ` in step "${end.stepName}"` : "";
    throw new SourceFailedError(`Workflow "${end.workflowName}" failed${where} and did not answer; ${lookUp}.`, details);
  }
  throw new SourceFailedError(`Workflow "${end.workflowName}" finished without calling $.respond({ status, body }), which a workflow set to respond itself must do; ${lookUp}.`, details);
}

function answerFailure(logger: Logger, response: ServerResponse, error: unknown, closing: boolean): void {
  const { status, body, unexpected } = toHttpError(error);
  if (unexpected && !(error instanceof SourceFailedError) && !(error instanceof UnavailableError)) logger.error({ err: error }, "an endpoint request failed");
  if (!canAnswer(response)) return;
  // The rest of a body over the limit is never read: the connection cannot carry another request.
  const retryAfter = error instanceof UnavailableError ? error.retryAfterSeconds : undefined;
  answerError(response, status, body, closing || error instanceof BodyTooLargeError, retryAfter);
}

/** One line per request, as the API's requests get; the token stays out of the logs (it is the endpoint's secret). */
function logWhenFinished(logger: Logger, request: IncomingMessage, response: ServerResponse, address: EndpointAddress): void {
  const startedAt = performance.now();
  response.once("finish", () => {
    logger.info(
      { method: request.method, url: address.path === "/" ? "/e/:token" : "/e/:token/*", status: response.statusCode, ms: Math.round(performance.now() - startedAt) },
      "request",
    );
  });
}
