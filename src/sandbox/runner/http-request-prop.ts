/**
 * The run-time value of an `http_request` prop (API-COMPAT): the configured
 * request's fields, plus `execute()`, which sends it and resolves with
 * `{ status, headers, data }`.
 *
 * The request goes out through node's http and https, whose sockets the
 * network shim routes to the host's egress proxy like any other connection
 * of user code: the proxy checks every address (each redirect is a new
 * connection, checked again), and under bubblewrap there is no other way
 * out. Nothing here widens what the component could already reach.
 */
import { createRequire } from "node:module";
import type * as HttpModule from "node:http";
import type * as HttpsModule from "node:https";
import { readHttpRequest, type HttpRequestConfig } from "./http-request-config.js";

// Taken when the runner starts, before user code could replace them on the shared built-in modules.
const builtin = createRequire("/");
const httpRequest = (builtin("node:http") as typeof HttpModule).request;
const httpsRequest = (builtin("node:https") as typeof HttpsModule).request;

/** Answers bigger than this are refused: the whole body is held in the runner's heap. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const TIMEOUT_MS = 60_000;

export interface HttpRequestResult {
  status: number;
  headers: Record<string, string | string[]>;
  /** Parsed JSON when the answer says it is JSON (and parses), else text. */
  data: unknown;
}

interface Answer {
  status: number;
  headers: HttpModule.IncomingHttpHeaders;
  body: Buffer;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function buildHttpRequestProp(name: string, configured: unknown): Record<string, unknown> {
  const fields = isRecord(configured) ? { ...configured } : {};
  // A function, so that `{ ...this.httpRequest }` or JSON of the prop shows the request, not a method.
  return Object.assign(fields, { execute: () => execute(readHttpRequest(name, configured)) });
}

async function execute(config: HttpRequestConfig): Promise<HttpRequestResult> {
  let url = config.url;
  let method = config.method;
  let body = config.body;
  for (let hop = 0; ; hop++) {
    const answer = await send(method, url, config.headers, body);
    const location = answer.headers.location;
    if (![301, 302, 303, 307, 308].includes(answer.status) || typeof location !== "string" || hop === MAX_REDIRECTS) {
      return { status: answer.status, headers: flatHeaders(answer.headers), data: decode(answer) };
    }
    const next = new URL(location, url);
    if (next.protocol !== "http:" && next.protocol !== "https:") return { status: answer.status, headers: flatHeaders(answer.headers), data: decode(answer) };
    // As browsers and axios do: a 303 (and a 301/302 after a POST) is followed with a GET and no body.
    if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === "POST")) {
      method = "GET";
      body = null;
    }
    url = next;
  }
}

function send(method: string, url: URL, headers: Record<string, string>, body: Buffer | null): Promise<Answer> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  const outgoing = { ...headers };
  if (body !== null) outgoing["content-length"] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: outgoing, timeout: TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy(new RangeError(`http_request execute(): ${method} ${url.origin}${url.pathname} answered more than ${MAX_RESPONSE_BYTES / 1024 / 1024} MB; ask for less (paging, a range).`));
          return;
        }
        chunks.push(chunk);
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`http_request execute(): ${method} ${url.origin}${url.pathname} did not answer within ${TIMEOUT_MS / 1000} s.`)));
    req.on("error", reject);
    req.end(body ?? undefined);
  });
}

function flatHeaders(headers: HttpModule.IncomingHttpHeaders): Record<string, string | string[]> {
  const flat: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = value;
  return flat;
}

function decode(answer: Answer): unknown {
  const text = answer.body.toString("utf8");
  const type = answer.headers["content-type"] ?? "";
  if (!/[/+]json\b/i.test(type)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
