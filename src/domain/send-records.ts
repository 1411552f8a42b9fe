/**
 * What a run record keeps of each `$.send.*` call of a step, so that a user
 * can see what the step sent and what became of it: the destination, its
 * target, a short summary of the payload, and the delivery status.
 *
 * Summaries are cut, and never hold what is usually secret: an http send's
 * auth, header values and query string are left out (names only).
 */

export const SEND_DESTINATIONS = ["http", "email", "s3", "emit", "sse"] as const;
export type SendDestination = (typeof SEND_DESTINATIONS)[number];

/**
 * pending: in the send outbox, not carried out yet (sends go out after the
 * run is recorded; while a failed attempt waits to be tried again, `detail`
 * says why it failed and when the next is due); delivered: carried out;
 * failed: every attempt failed, and the workflow got a DestinationFailed
 * error (`detail` says why); not_sent: the run failed, so its sends were
 * dropped.
 */
export type SendStatus = "pending" | "delivered" | "failed" | "not_sent";

export interface SendRecord {
  destination: SendDestination;
  target: string;
  summary: string;
  status: SendStatus;
  /** The answer's status line for http, the object written for s3, the failure's message; null when there is nothing to add. */
  detail: string | null;
}

export const MAX_SEND_SUMMARY_CHARS = 200;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function cut(text: string, max = MAX_SEND_SUMMARY_CHARS): string {
  const oneLine = text.replace(/\s*\n\s*/g, " ");
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max)}… (${oneLine.length} characters)`;
}

function json(value: unknown): string {
  if (value === undefined) return "nothing";
  return typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? "nothing");
}

function field(payload: Record<string, unknown>, name: string): string {
  const value = payload[name];
  return typeof value === "string" ? value : "";
}

/** `METHOD origin/path`: the query may carry tokens, so only its names are shown, in the summary. */
function httpSend(payload: Record<string, unknown>): Pick<SendRecord, "target" | "summary"> {
  const method = field(payload, "method").toUpperCase() || "?";
  let where = field(payload, "url");
  const queryNames: string[] = [];
  try {
    const url = new URL(where);
    where = `${url.origin}${url.pathname}`;
    queryNames.push(...url.searchParams.keys());
  } catch {
    where = cut(where, 100);
  }
  if (isRecord(payload.params)) queryNames.push(...Object.keys(payload.params));
  const parts = [payload.data === undefined ? "no body" : `data ${json(payload.data)}`];
  if (isRecord(payload.headers) && Object.keys(payload.headers).length > 0) parts.push(`headers ${Object.keys(payload.headers).join(", ")}`);
  if (queryNames.length > 0) parts.push(`query ${[...new Set(queryNames)].join(", ")}`);
  if (payload.auth !== undefined && payload.auth !== null) parts.push("basic auth");
  return { target: `${method} ${where}`, summary: cut(parts.join("; ")) };
}

function describe(destination: SendDestination, payload: Record<string, unknown>, emitterId: string): Pick<SendRecord, "target" | "summary"> {
  switch (destination) {
    case "http":
      return httpSend(payload);
    case "email": {
      const subject = field(payload, "subject");
      const body = field(payload, "text") || field(payload, "html");
      return { target: "the workflow owner's email address", summary: cut(`subject ${subject ? JSON.stringify(subject) : "(default)"}${body ? `; ${JSON.stringify(body)}` : ""}`) };
    }
    case "s3":
      return { target: `s3://${field(payload, "bucket")}/${field(payload, "prefix")}`, summary: cut(`payload ${json(payload.payload)}`) };
    case "emit":
      return { target: `${emitterId} (default channel)`, summary: cut(`raw_event ${json(payload.raw_event)}`) };
    case "sse":
      return { target: `${emitterId} SSE channel ${JSON.stringify(field(payload, "channel"))}`, summary: cut(`payload ${json(payload.payload)}`) };
  }
}

/** The record of one send as the step made it; `emitterId` is the workflow (where emit and sse go). */
export function sendRecord(send: { type: string; payload: unknown }, emitterId: string, status: SendStatus): SendRecord {
  const destination = (SEND_DESTINATIONS as readonly string[]).includes(send.type) ? (send.type as SendDestination) : "http";
  return { destination, ...describe(destination, isRecord(send.payload) ? send.payload : {}, emitterId), status, detail: null };
}
