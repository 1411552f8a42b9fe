/**
 * An `http_request` prop's configured value read into a request to send.
 * The forms existing components and the hosted service's request editor
 * produce are all taken:
 *
 * - `method` (default GET) and `url` (absolute, http or https);
 * - `headers` and `params`: an object of names to values, or a list of
 *   `{ name, value }` rows (rows without a name, or `disabled`, are skipped);
 * - `auth`: `{ type: "basic", username, password }`, `{ type: "bearer", token }`,
 *   `{ type: "none" }`, or `{ username, password }`;
 * - `body`: a string (sent as it is), the editor's `{ type | mode: "raw", raw,
 *   contentType? }` or `{ type | mode: "fields", fields, contentType? }`, or any
 *   other JSON value (sent as JSON).
 *
 * Errors are TypeErrors that name the prop and the field, thrown from
 * `execute()`, where the component can catch them.
 */

export interface HttpRequestConfig {
  method: string;
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Buffer | null;
}

type Rows = Record<string, string>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function text(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

/** `{ a: "1" }` or `[{ name: "a", value: "1" }]`; objects as values are sent as JSON. */
function readRows(value: unknown, what: string): Rows {
  const rows: Rows = {};
  if (value === undefined || value === null) return rows;
  const entries: Array<[unknown, unknown]> = Array.isArray(value)
    ? value.filter((row) => isRecord(row) && row.disabled !== true).map((row) => [(row as Record<string, unknown>).name, (row as Record<string, unknown>).value])
    : isRecord(value)
      ? Object.entries(value)
      : (() => {
          throw new TypeError(`${what} must be an object of names to values, or a list of { name, value }; got ${kindOf(value)}.`);
        })();
  for (const [name, item] of entries) {
    if (typeof name !== "string" || name.trim() === "" || item === undefined || item === null) continue;
    rows[name.trim()] = text(item) ?? JSON.stringify(item);
  }
  return rows;
}

function readUrl(value: unknown, what: string): URL {
  if (typeof value !== "string" || value.trim() === "") throw new TypeError(`${what}.url is required: give the prop a URL such as "https://api.example.com/items"; got ${kindOf(value)}.`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new TypeError(`${what}.url must be an absolute URL (with http:// or https://); got ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`${what}.url must be an http or https URL; got ${JSON.stringify(value)}.`);
  return url;
}

function readAuth(value: unknown, what: string): string | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw new TypeError(`${what}.auth must be an object such as { type: "basic", username, password } or { type: "bearer", token }; got ${kindOf(value)}.`);
  const type = typeof value.type === "string" ? value.type.toLowerCase() : value.token !== undefined ? "bearer" : "basic";
  if (type === "none" || type === "") return null;
  if (type === "bearer") {
    if (typeof value.token !== "string" || value.token === "") throw new TypeError(`${what}.auth: a bearer auth needs a token (a non-empty string).`);
    return `Bearer ${value.token}`;
  }
  if (type === "basic") {
    const username = text(value.username) ?? "";
    const password = text(value.password) ?? "";
    if (username === "" && password === "") return null;
    return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  }
  throw new TypeError(`${what}.auth.type must be "basic", "bearer" or "none"; got ${JSON.stringify(value.type)}.`);
}

/** The body as bytes and the content type it implies (a content-type header given by the user wins). */
function readBody(value: unknown, what: string): { bytes: Buffer; type: string } | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value === "" ? null : { bytes: Buffer.from(value), type: "text/plain; charset=utf-8" };
  if (isRecord(value)) {
    const form = typeof value.mode === "string" ? value.mode : typeof value.type === "string" ? value.type : null;
    const contentType = typeof value.contentType === "string" && value.contentType !== "" ? value.contentType : null;
    if (form === "raw") {
      const raw = text(value.raw) ?? (value.raw === undefined ? "" : JSON.stringify(value.raw));
      return raw === "" ? null : { bytes: Buffer.from(raw), type: contentType ?? "text/plain; charset=utf-8" };
    }
    if (form === "fields") {
      const fields = readRows(value.fields, `${what}.body.fields`);
      if (contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
        return { bytes: Buffer.from(new URLSearchParams(fields).toString()), type: contentType };
      }
      return { bytes: Buffer.from(JSON.stringify(fields)), type: contentType ?? "application/json" };
    }
  }
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError(`${what}.body must be a string or JSON data; got ${kindOf(value)}.`);
  return { bytes: Buffer.from(json), type: "application/json" };
}

export function readHttpRequest(name: string, configured: unknown): HttpRequestConfig {
  const what = `this.${name}`;
  if (!isRecord(configured)) throw new TypeError(`${what} has no request configured: give the prop { method, url, headers?, params?, body?, auth? }.`);
  const method = configured.method === undefined || configured.method === null || configured.method === "" ? "GET" : configured.method;
  if (typeof method !== "string" || !/^[A-Za-z]+$/.test(method)) throw new TypeError(`${what}.method must be an HTTP method such as "GET" or "POST"; got ${JSON.stringify(method) ?? kindOf(method)}.`);
  const url = readUrl(configured.url, what);
  for (const [param, value] of Object.entries(readRows(configured.params, `${what}.params`))) url.searchParams.append(param, value);
  const headers: Rows = {};
  for (const [header, value] of Object.entries(readRows(configured.headers, `${what}.headers`))) headers[header.toLowerCase()] = value;
  const authorization = readAuth(configured.auth, what);
  if (authorization !== null && headers.authorization === undefined) headers.authorization = authorization;
  const upper = method.toUpperCase();
  // GET and HEAD carry no body: servers may refuse one.
  const body = upper === "GET" || upper === "HEAD" ? null : readBody(configured.body, what);
  if (body !== null) headers["content-type"] ??= body.type;
  return { method: upper, url, headers, body: body?.bytes ?? null };
}
