/**
 * The console's only way to the server: the REST API under /v1, same origin,
 * authenticated by the session cookie (HttpOnly: scripts never see it).
 * Failures become an ApiError carrying the API's own message.
 */

/** The body of every failed API request (src/api/schemas/common.ts, ErrorBodySchema). */
interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export class ApiError extends Error {
  /** HTTP status; 0 when the server could not be reached. */
  readonly status: number;
  /** The API's stable error name (ValidationError, NotFound, Unauthorized, …). */
  readonly code: string;
  /** The request field the API blamed, when it named one (a form shows the message there). */
  readonly field: string | null;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.field = typeof details.field === "string" ? details.field : null;
  }
}

export interface RequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Query parameters; undefined ones are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
}

/** Listeners told when the API answers 401: the session ended (signed out elsewhere, expired, key revoked). */
const unauthorizedListeners = new Set<(error: ApiError) => void>();

export function onUnauthorized(listener: (error: ApiError) => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** One API call; resolves with the parsed JSON body (undefined for 204), rejects with ApiError. */
export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: "same-origin",
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "NetworkError", "The Runnel server did not answer. Check that it is running and your connection, then try again.");
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed = text ? safeParse(text) : undefined;
  if (!response.ok) {
    const error = toApiError(response.status, parsed, text);
    if (error.status === 401) for (const listener of unauthorizedListeners) listener(error);
    throw error;
  }
  return parsed as T;
}

/** `{data}` unwrapped: for the API's single-object answers. */
export async function apiData<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  return (await api<{ data: T }>(method, path, options)).data;
}

/** An id or name as one path segment. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

function withQuery(path: string, query: RequestOptions["query"]): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function toApiError(status: number, parsed: unknown, text: string): ApiError {
  const body = parsed as Partial<ErrorBody> | undefined;
  if (body?.error && typeof body.error.message === "string") {
    return new ApiError(status, body.error.code ?? "Error", body.error.message, body.error.details ?? {});
  }
  // Not the API's shape (a proxy's error page, say): say what came back, briefly.
  const excerpt = text.trim().slice(0, 200);
  return new ApiError(status, "HttpError", `The server answered ${status}${excerpt ? `: ${excerpt}` : ""}.`);
}

/**
 * The API's message for one field of a form, when the error names it
 * (`details.field`, as "props.channel" or "name"); null otherwise, so the form
 * shows the error as a whole instead.
 */
export function fieldError(error: unknown, field: string): string | null {
  if (!(error instanceof ApiError) || error.field === null) return null;
  return error.field === field || error.field.startsWith(`${field}.`) ? error.message : null;
}
