/**
 * The `body` a source sees for an HTTP request: JSON and form bodies parsed,
 * anything else as text. A body that claims JSON but does not parse is given as
 * text rather than refused: webhook senders are not always right about their
 * content type, and the source may still make sense of it (`bodyRaw` is there too).
 */
export function parseBody(raw: Buffer | string, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const text = typeof raw === "string" ? raw : raw.toString("utf8");
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (type === "application/x-www-form-urlencoded") return parseForm(text);
  return text;
}

/** `a=1&b=2&b=3` → `{a: "1", b: ["2", "3"]}`: repeated keys become arrays. */
function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const previous = out[key];
    out[key] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return out;
}

/**
 * Adds `body` to an HTTP event that carries only `bodyRaw` (a `run` call with
 * `httpBody`): the host hands the raw text on, and the body is parsed here,
 * by whoever needs it, after the fields the event already has.
 */
export function addParsedBody(event: unknown): unknown {
  if (typeof event !== "object" || event === null) return event;
  const request = event as { bodyRaw?: unknown; headers?: Record<string, unknown>; body?: unknown };
  const contentType = request.headers?.["content-type"];
  const body = typeof request.bodyRaw === "string" ? parseBody(request.bodyRaw, typeof contentType === "string" ? contentType : undefined) : undefined;
  if (body !== undefined) request.body = body;
  return event;
}
