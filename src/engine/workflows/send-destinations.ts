import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { SEND_IDEMPOTENCY_HEADER, type OutboxSend } from "../../domain/durable-sends.js";
import type { Workflow } from "../../domain/workflows.js";
import type { EventHub } from "../event-hub.js";
import type { Mailer } from "../mail/mailer.js";
import { egressRequest, EgressRefusedError } from "../network/egress-request.js";
import { UndeliverableSendError, type Destinations } from "./destinations.js";

export interface DestinationsOptions {
  hub: EventHub;
  mailer: Mailer | null;
  /** Where `$.send.s3` objects are written (an S3-like layout: `<owner>/<bucket>/<prefix><object>`). */
  objectsDir: string;
  /** Time allowed to one `$.send.http` request. */
  httpTimeoutMs?: number;
  /** What `$.send.http` may connect to (the network policy of user code); null: anything. */
  egressPolicy: EgressPolicy | null;
  now?: () => number;
}

/**
 * The destinations of `$.send.*`, carried out one attempt at a time by the
 * send outbox's worker (send-outbox-worker.ts), which retries and logs.
 * Each attempt is safe to repeat: an http send carries the send's
 * idempotency key, an s3 object's name is fixed by the send (a repeat
 * overwrites it), a mail is recorded under an id made from the key. The
 * payloads were checked in the runner; what is used here is checked again,
 * since a runner's word is not trusted.
 */
export function createDestinations(options: DestinationsOptions): Destinations {
  const now = options.now ?? Date.now;
  const carry: Record<OutboxSend["type"], (workflow: Workflow, send: OutboxSend, payload: Record<string, unknown>) => Promise<string>> = {
    http: (_workflow, send, payload) => sendHttp(payload, send.id, options.httpTimeoutMs ?? 30_000, options.egressPolicy),
    email: async (workflow, send, payload) => {
      if (!options.mailer) throw new UndeliverableSendError("this server has no mail room");
      const subject = typeof payload.subject === "string" ? payload.subject : `Message from workflow ${workflow.name}`;
      const text = typeof payload.text === "string" ? payload.text : "";
      const html = typeof payload.html === "string" ? payload.html : null;
      const entry = await options.mailer.sendToOwner({ ownerId: workflow.ownerId, subject, text, html, kind: "send-email", workflowId: workflow.id, idempotencyKey: send.id, createdAt: send.createdAt });
      return `email ${entry.id} ${entry.status}`;
    },
    s3: (workflow, send, payload) => writeObject(options.objectsDir, workflow.ownerId, send, payload),
    sse: async (workflow, send, payload) => {
      const channel = typeof payload.channel === "string" && payload.channel !== "" ? payload.channel : "default";
      options.hub.publish(workflow.id, { kind: "event", channel, item: { id: send.runId, channel, payload: payload.payload ?? null, sent_at_ms: now() } });
      return "";
    },
  };
  return {
    async deliver(workflow, send) {
      const deliverOne = carry[send.type];
      if (!deliverOne) throw new UndeliverableSendError(`unknown destination ${JSON.stringify(send.type)}`);
      try {
        const note = await deliverOne(workflow, send, isRecord(send.payload) ? send.payload : {});
        return note || null;
      } catch (error) {
        // The policy will refuse the same address next time too.
        if (error instanceof EgressRefusedError) throw new UndeliverableSendError(error.message);
        throw error;
      }
    },
  };
}

/** `{method, url, auth?, data?, headers?, params?}`, as the hosted service takes it; the answer's status is noted. */
async function sendHttp(payload: Record<string, unknown>, idempotencyKey: string, timeoutMs: number, policy: EgressPolicy | null): Promise<string> {
  if (typeof payload.url !== "string" || typeof payload.method !== "string") throw new UndeliverableSendError("the payload needs method and url");
  let url: URL;
  try {
    url = new URL(payload.url);
  } catch {
    throw new UndeliverableSendError(`url is not a URL: ${JSON.stringify(payload.url.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UndeliverableSendError(`url must be http or https, got ${url.protocol}`);
  const params = isRecord(payload.params) ? payload.params : {};
  for (const [name, value] of Object.entries(params)) url.searchParams.append(name, String(value));
  const headers: Record<string, string> = {};
  // The send's own key, the same at every attempt: a receiver that honours it acts once. A key the step set itself wins.
  headers[SEND_IDEMPOTENCY_HEADER] = idempotencyKey;
  if (isRecord(payload.headers)) for (const [name, value] of Object.entries(payload.headers)) headers[name.toLowerCase()] = String(value);
  const auth = payload.auth;
  if (isRecord(auth) && typeof auth.username === "string") {
    headers.authorization = `Basic ${Buffer.from(`${auth.username}:${typeof auth.password === "string" ? auth.password : ""}`).toString("base64")}`;
  }
  let body: string | undefined;
  if (payload.data !== undefined && payload.data !== null) {
    body = typeof payload.data === "string" ? payload.data : JSON.stringify(payload.data);
    if (typeof payload.data !== "string") headers["content-type"] ??= "application/json";
  }
  const method = payload.method.toUpperCase();
  const response = await egressRequest({ method, url, headers, body: method === "GET" || method === "HEAD" ? undefined : body, timeoutMs, policy });
  if (response.status < 200 || response.status > 299) throw new Error(`${method} ${url.origin}${url.pathname} answered ${response.status}`);
  return `${method} ${url.origin}${url.pathname} answered ${response.status}`;
}

/**
 * `{bucket, prefix, payload}`: written as one JSON object per send under the
 * server's objects folder (`<owner>/<bucket>/<prefix><time>-<run>-<step>-<send>.json`,
 * the time being when the run was recorded), the layout an S3 sync can pick
 * up. The name is fixed by the send, so a repeated attempt overwrites the
 * same object. Names cannot climb out of the owner's folder.
 */
async function writeObject(root: string, ownerId: string, send: OutboxSend, payload: Record<string, unknown>): Promise<string> {
  if (typeof payload.bucket !== "string" || !/^[a-z0-9][a-z0-9.-]{1,62}$/.test(payload.bucket)) throw new UndeliverableSendError("bucket must be an S3 bucket name (lower-case letters, digits, dots and dashes)");
  const prefix = typeof payload.prefix === "string" ? payload.prefix : "";
  const ownerRoot = resolve(root, ownerId);
  const name = `${prefix}${new Date(send.createdAt).toISOString().replace(/[:.]/g, "-")}-${send.runId}-${send.step}-${send.send}.json`;
  const file = resolve(ownerRoot, payload.bucket, name);
  if (!file.startsWith(ownerRoot + sep)) throw new UndeliverableSendError("prefix must stay inside the bucket");
  await mkdir(dirname(file), { recursive: true });
  const pending = `${file}.tmp`;
  await writeFile(pending, JSON.stringify(payload.payload ?? null));
  await rename(pending, file);
  return `s3://${payload.bucket}/${file.slice(join(ownerRoot, payload.bucket).length + 1)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
