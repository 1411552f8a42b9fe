/**
 * The payloads of `$.send.http/email/s3/emit/sse`, checked where the mistake
 * is made: the host carries sends out after the run, when the step's code can
 * no longer hear about a wrong field. Each check returns the payload as JSON
 * data, rebuilt from the known fields only (other fields are left out, as the
 * destinations would ignore them).
 */
import type { StepSendType } from "../protocol.js";
import { toJsonText } from "./json-check.js";

type Payload = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "string" && value.trim() === "") return "an empty string";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function json(value: unknown, what: string): unknown {
  return JSON.parse(toJsonText(value, what));
}

function requiredString(input: Payload, field: string, what: string, options: { nonEmpty?: boolean } = {}): string {
  const value = input[field];
  if (typeof value !== "string" || (options.nonEmpty && value.trim() === "")) {
    throw new TypeError(`${what}: ${field} must be a ${options.nonEmpty ? "non-empty " : ""}string, got ${kindOf(value)}.`);
  }
  return value;
}

function optionalString(input: Payload, field: string, what: string): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new TypeError(`${what}: ${field} must be a string, got ${kindOf(value)}.`);
  return value;
}

function requiredJson(input: Payload, field: string, what: string): unknown {
  if (input[field] === undefined) throw new TypeError(`${what}: ${field} is required.`);
  return json(input[field], `${what}: ${field}`);
}

/** Header and query values: text, as they go on the wire (numbers and booleans are written out). */
function textMap(input: Payload, field: string, what: string): Record<string, string> | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new TypeError(`${what}: ${field} must be an object of names to strings, got ${kindOf(value)}.`);
  const result: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (typeof item !== "string" && typeof item !== "number" && typeof item !== "boolean") {
      throw new TypeError(`${what}: ${field}.${name} must be a string, a number or a boolean, got ${kindOf(item)}.`);
    }
    result[name] = String(item);
  }
  return result;
}

function withDefined(payload: Payload): Payload {
  for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
  return payload;
}

const HTTP_METHOD = /^[A-Za-z]+$/;

function http(input: Payload, what: string): Payload {
  const method = requiredString(input, "method", what, { nonEmpty: true });
  if (!HTTP_METHOD.test(method)) throw new TypeError(`${what}: method must be an HTTP method such as "POST", got ${JSON.stringify(method)}.`);
  const url = requiredString(input, "url", what, { nonEmpty: true });
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new TypeError(`${what}: url must be an absolute URL, got ${JSON.stringify(url)}.`);
  }
  if (protocol !== "http:" && protocol !== "https:") throw new TypeError(`${what}: url must be an http or https URL, got ${JSON.stringify(url)}.`);
  let auth: Payload | undefined;
  if (input.auth !== undefined && input.auth !== null) {
    if (!isRecord(input.auth)) throw new TypeError(`${what}: auth must be an object { username, password }, got ${kindOf(input.auth)}.`);
    auth = { username: requiredString(input.auth, "username", `${what}: auth`), password: requiredString(input.auth, "password", `${what}: auth`) };
  }
  return withDefined({
    method: method.toUpperCase(),
    url,
    auth,
    data: input.data === undefined ? undefined : json(input.data, `${what}: data`),
    headers: textMap(input, "headers", what),
    params: textMap(input, "params", what),
  });
}

function email(input: Payload, what: string): Payload {
  return withDefined({ subject: optionalString(input, "subject", what), text: optionalString(input, "text", what), html: optionalString(input, "html", what) });
}

function s3(input: Payload, what: string): Payload {
  return {
    bucket: requiredString(input, "bucket", what, { nonEmpty: true }),
    prefix: requiredString(input, "prefix", what),
    payload: requiredJson(input, "payload", what),
  };
}

function emit(input: Payload, what: string): Payload {
  return { raw_event: requiredJson(input, "raw_event", what) };
}

function sse(input: Payload, what: string): Payload {
  return { channel: requiredString(input, "channel", what, { nonEmpty: true }), payload: requiredJson(input, "payload", what) };
}

const CHECKS: Record<StepSendType, { fields: string; check(input: Payload, what: string): Payload }> = {
  http: { fields: "{ method, url, auth?, data?, headers?, params? }", check: http },
  email: { fields: "{ subject?, text?, html? }", check: email },
  s3: { fields: "{ bucket, prefix, payload }", check: s3 },
  emit: { fields: "{ raw_event }", check: emit },
  sse: { fields: "{ channel, payload }", check: sse },
};

export const STEP_SEND_TYPES = Object.keys(CHECKS) as StepSendType[];

/** The payload as it is recorded, or a TypeError naming the field that is wrong. */
export function checkSend(type: StepSendType, input: unknown): Payload {
  const what = `$.send.${type}()`;
  const { fields, check } = CHECKS[type];
  if (!isRecord(input)) throw new TypeError(`${what} takes an object ${fields}, got ${kindOf(input)}.`);
  return check(input, what);
}
