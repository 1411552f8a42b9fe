import type { ServerResponse } from "node:http";
import { SourceFailedError } from "../../domain/errors.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { ErrorBody } from "../error-mapping.js";

const JSON_TYPE = "application/json; charset=utf-8";

/** Whether the caller can still be answered: once only, and not after it went away. */
export function canAnswer(response: ServerResponse): boolean {
  return !response.headersSent && !response.writableEnded;
}

/** JSON text, as it is: the answers of the server itself (a stored request's, an error's). */
function answerJson(response: ServerResponse, status: number, text: string, closeConnection: boolean, retryAfterSeconds?: number): void {
  const headers: Record<string, string | number> = { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(text) };
  if (closeConnection) headers.connection = "close";
  if (retryAfterSeconds !== undefined) headers["retry-after"] = retryAfterSeconds;
  response.writeHead(status, headers);
  response.end(text);
}

/** The answer to a request that made its events durable: the hottest write of the server, so text rather than a serializer. */
export function answerStored(response: ServerResponse, eventCount: number, closing: boolean): void {
  answerJson(response, 200, `{"success":true,"events":${eventCount}}`, closing);
}

export function answerError(response: ServerResponse, status: number, body: ErrorBody, closeConnection: boolean, retryAfterSeconds?: number): void {
  answerJson(response, status, JSON.stringify(body), closeConnection, retryAfterSeconds);
}

/**
 * A response a component (or a workflow's $.respond) chose. Its headers are
 * checked here, all before anything is written, so that a bad one fails the
 * answer cleanly with a message naming it. The length is always the body's own.
 */
export function answerCustom(response: ServerResponse, answer: HttpResponse, closing: boolean): void {
  const body = answer.body === null ? "" : typeof answer.body === "string" ? answer.body : Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
  let hasType = false;
  try {
    for (const [name, value] of Object.entries(answer.headers)) {
      const lower = name.toLowerCase();
      if (lower === "content-length" || lower === "transfer-encoding") continue;
      if (lower === "content-type") hasType = true;
      response.setHeader(name, value);
    }
  } catch (error) {
    for (const name of response.getHeaderNames()) response.removeHeader(name);
    throw new SourceFailedError(`The source's response has a header Node.js cannot send: ${(error as Error).message}. Header names are tokens and values have no line breaks.`);
  }
  // As a web framework would: text is text and bytes are bytes, unless the component said otherwise.
  if (!hasType) response.setHeader("content-type", typeof body === "string" ? "text/plain; charset=utf-8" : "application/octet-stream");
  response.setHeader("content-length", typeof body === "string" ? Buffer.byteLength(body) : body.length);
  if (closing) response.setHeader("connection", "close");
  response.statusCode = answer.status;
  response.end(body);
}
