import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { Logger } from "pino";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import type { Workflow } from "../../domain/workflows.js";
import type { StepSend } from "../../sandbox/protocol.js";
import type { Store } from "../../store/store.js";
import type { EventHub } from "../event-hub.js";
import type { Mailer } from "../mail/mailer.js";
import { egressRequest } from "../network/egress-request.js";
import type { CarriedOut, Destinations } from "./destinations.js";

export interface DestinationsOptions {
  store: Store;
  hub: EventHub;
  mailer: Mailer | null;
  logger: Logger;
  /** Where `$.send.s3` objects are written (an S3-like layout: `<owner>/<bucket>/<prefix><object>`). */
  objectsDir: string;
  /** Time allowed to one `$.send.http` request. */
  httpTimeoutMs?: number;
  /** What `$.send.http` may connect to (the network policy of user code); null: anything. */
  egressPolicy: EgressPolicy | null;
  now?: () => number;
}

/**
 * The destinations of `$.send.*`, carried out after the run is recorded, one
 * after the other in the order the steps called them. A failure is logged in
 * the workflow's logs (`GET /v1/workflows/<id>/logs`) and does not stop the
 * others. The payloads were checked in the runner; what is used here is
 * checked again, since a runner's word is not trusted.
 */
export function createDestinations(options: DestinationsOptions): Destinations {
  const now = options.now ?? Date.now;
  const log = async (workflow: Workflow, text: string, stream: "system" | "stderr" = "system") => {
    const logs = await options.store.appendLogs(workflow.ownerId, workflow.id, [{ stream, text, ts: now() }]);
    for (const item of logs) options.hub.publish(workflow.id, { kind: "log", item });
  };
  const carry: Record<StepSend["type"], (workflow: Workflow, runId: string, payload: Record<string, unknown>) => Promise<string>> = {
    // Appended with the run itself, in its transaction.
    emit: async () => "",
    http: (_workflow, _runId, payload) => sendHttp(payload, options.httpTimeoutMs ?? 30_000, options.egressPolicy),
    email: async (workflow, _runId, payload) => {
      if (!options.mailer) throw new Error("this server has no mail room");
      const subject = typeof payload.subject === "string" ? payload.subject : `Message from workflow ${workflow.name}`;
      const text = typeof payload.text === "string" ? payload.text : "";
      const html = typeof payload.html === "string" ? payload.html : null;
      const entry = await options.mailer.sendToOwner({ ownerId: workflow.ownerId, subject, text, html, kind: "send-email", workflowId: workflow.id });
      return `email ${entry.id} ${entry.status}`;
    },
    s3: (workflow, runId, payload) => writeObject(options.objectsDir, workflow.ownerId, runId, payload, now()),
    sse: async (workflow, runId, payload) => {
      const channel = typeof payload.channel === "string" && payload.channel !== "" ? payload.channel : "default";
      options.hub.publish(workflow.id, { kind: "event", channel, item: { id: runId, channel, payload: payload.payload ?? null, sent_at_ms: now() } });
      return "";
    },
  };
  return {
    async carryOut(workflow, runId, sends) {
      const carried: CarriedOut[] = [];
      for (const send of sends) {
        if (send.type === "emit") {
          carried.push({ status: "delivered", detail: null });
          continue;
        }
        const payload = (send.payload ?? {}) as Record<string, unknown>;
        try {
          const note = await carry[send.type](workflow, runId, payload);
          carried.push({ status: "delivered", detail: note || null });
          if (note) await log(workflow, `$.send.${send.type} of run ${runId}: ${note}`);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          carried.push({ status: "failed", detail: message });
          options.logger.warn({ workflowId: workflow.id, workflowName: workflow.name, runId, type: send.type, err: error }, "a $.send destination failed");
          await log(workflow, `$.send.${send.type} of run ${runId} failed: ${message}`, "stderr").catch(() => undefined);
        }
      }
      return carried;
    },
  };
}

/** `{method, url, auth?, data?, headers?, params?}`, as the hosted service takes it; the answer's status is noted. */
async function sendHttp(payload: Record<string, unknown>, timeoutMs: number, policy: EgressPolicy | null): Promise<string> {
  if (typeof payload.url !== "string" || typeof payload.method !== "string") throw new Error("the payload needs method and url");
  const url = new URL(payload.url);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`url must be http or https, got ${url.protocol}`);
  const params = isRecord(payload.params) ? payload.params : {};
  for (const [name, value] of Object.entries(params)) url.searchParams.append(name, String(value));
  const headers: Record<string, string> = {};
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
 * server's objects folder (`<owner>/<bucket>/<prefix><time>-<run>.json`), the
 * layout an S3 sync can pick up. Names cannot climb out of the owner's folder.
 */
async function writeObject(root: string, ownerId: string, runId: string, payload: Record<string, unknown>, at: number): Promise<string> {
  if (typeof payload.bucket !== "string" || !/^[a-z0-9][a-z0-9.-]{1,62}$/.test(payload.bucket)) throw new Error("bucket must be an S3 bucket name (lower-case letters, digits, dots and dashes)");
  const prefix = typeof payload.prefix === "string" ? payload.prefix : "";
  const ownerRoot = resolve(root, ownerId);
  const file = resolve(ownerRoot, payload.bucket, `${prefix}${new Date(at).toISOString().replace(/[:.]/g, "-")}-${runId}.json`);
  if (!file.startsWith(ownerRoot + sep)) throw new Error("prefix must stay inside the bucket");
  await mkdir(dirname(file), { recursive: true });
  const pending = `${file}.tmp`;
  await writeFile(pending, JSON.stringify(payload.payload ?? null));
  await rename(pending, file);
  return `s3://${payload.bucket}/${file.slice(join(ownerRoot, payload.bucket).length + 1)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
