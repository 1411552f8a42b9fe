/**
 * HTTP requests the server makes on a user's behalf (`$.send.http`), under
 * the same network policy as user code: every address connected to, after
 * DNS and after each redirect, is checked, so a user cannot have the server
 * reach its own loopback, private networks or cloud metadata service for
 * them.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { egressDeniedMessage, type EgressPolicy } from "../../domain/egress-policy.js";

export interface EgressRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | undefined;
  timeoutMs: number;
  /** null: no policy (RUNNEL_SANDBOX_NETWORK=unrestricted). */
  policy: EgressPolicy | null;
  /** Keep the final answer's body (up to 1 MB) instead of dropping it: an OAuth token endpoint's answer is what is asked for. */
  keepBody?: boolean;
}

export interface EgressResponse {
  status: number;
  /** The URL that answered, after redirects. */
  url: URL;
  /** The final answer's body, when `keepBody` asked for it (cut at 1 MB). */
  body?: string;
}

/** Redirects followed at most, as browsers and fetch do (20 there; a webhook needs far fewer). */
const MAX_REDIRECTS = 5;
/** The answer's body is read and dropped, up to this much; a send only reports the status. */
const MAX_DRAINED_BYTES = 1024 * 1024;

export class EgressRefusedError extends Error {
  readonly code = "EACCES";
  constructor(message: string) {
    super(message);
    this.name = "EgressRefusedError";
  }
}

/** dns.lookup, keeping only the addresses the policy allows; none: the request fails saying why. */
function policyLookup(policy: EgressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, found) => {
      const addresses = found as unknown as LookupAddress[];
      if (error) return (callback as (error: Error) => void)(error);
      const allowed = addresses.filter((entry) => policy.check(entry.address, hostname).allowed);
      if (allowed.length === 0) {
        const verdict = addresses.length > 0 ? policy.check(addresses[0]!.address, hostname) : { allowed: false as const, reason: "it resolves to no address" };
        const reason = verdict.allowed ? "" : verdict.reason;
        return (callback as (error: Error) => void)(new EgressRefusedError(egressDeniedMessage(hostname, reason)));
      }
      if (options.all) return (callback as (error: null, addresses: LookupAddress[]) => void)(null, allowed);
      (callback as (error: null, address: string, family: number) => void)(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

function checkLiteral(url: URL, policy: EgressPolicy | null): void {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!policy || isIP(host) === 0) return;
  // An address literal is connected to without a look-up, so it is checked here.
  const verdict = policy.check(host);
  if (!verdict.allowed) throw new EgressRefusedError(egressDeniedMessage(url.host, verdict.reason));
}

function once(request: EgressRequest, url: URL): Promise<IncomingMessage> {
  checkLiteral(url, request.policy);
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(url, {
      method: request.method,
      headers: request.body === undefined ? request.headers : { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
      timeout: request.timeoutMs,
      ...(request.policy ? { lookup: policyLookup(request.policy) } : {}),
    });
    outgoing.on("response", resolve);
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer within ${request.timeoutMs} ms`)));
    outgoing.on("error", reject);
    outgoing.end(request.body);
  });
}

/** Reads the answer to its end (dropped, or kept when `keep`), up to MAX_DRAINED_BYTES. */
function drain(response: IncomingMessage, keep = false): Promise<string> {
  return new Promise((resolve) => {
    let read = 0;
    const chunks: Buffer[] = [];
    const done = () => resolve(keep ? Buffer.concat(chunks).toString("utf8") : "");
    response.on("data", (chunk: Buffer) => {
      read += chunk.length;
      if (keep && read <= MAX_DRAINED_BYTES) chunks.push(chunk);
      if (read > MAX_DRAINED_BYTES) response.destroy();
    });
    response.on("end", done);
    response.on("close", done);
    response.on("error", done);
  });
}

/** Sends the request, following redirects (each hop checked), and reports the final status. */
export async function egressRequest(request: EgressRequest): Promise<EgressResponse> {
  const deadline = Date.now() + request.timeoutMs;
  let url = request.url;
  let method = request.method;
  let body = request.body;
  for (let hop = 0; ; hop++) {
    const response = await once({ ...request, method, body, timeoutMs: Math.max(1, deadline - Date.now()) }, url);
    const text = await drain(response, request.keepBody === true);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (![301, 302, 303, 307, 308].includes(status) || !location || hop >= MAX_REDIRECTS) return request.keepBody ? { status, url, body: text } : { status, url };
    url = new URL(location, url);
    if (url.protocol !== "http:" && url.protocol !== "https:") return { status, url };
    // 303, and 301/302 after a POST, become a GET without a body, as browsers and fetch do.
    if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
      method = "GET";
      body = undefined;
    }
  }
}
