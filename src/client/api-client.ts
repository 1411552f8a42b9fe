import type { ErrorBody } from "../api/error-mapping.js";
import type { ApiKeyView, CreatedUserView, IssuedApiKeyView, UserView } from "../api/schemas/accounts.js";
import type { Page } from "../domain/paging.js";

/** A request the server refused; `code` is the stable error name from the body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The server could not be reached at all. */
export class ConnectionError extends Error {
  constructor(
    readonly serverUrl: string,
    reason: string,
  ) {
    super(`Could not reach the Runnel server at ${serverUrl} (${reason}). Is it running? Start one with \`runnel server\`, or log in to another with \`runnel login\`.`);
    this.name = "ConnectionError";
  }
}

export interface ApiClientOptions {
  serverUrl: string;
  apiKey: string;
  /** Per request, in milliseconds. */
  timeoutMs?: number;
}

export interface PageParams {
  limit?: number;
  before?: string;
  after?: string;
}

/** The one typed client of the REST API that the CLI (and anything else in TypeScript) uses. */
export class ApiClient {
  readonly serverUrl: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;

  constructor(options: ApiClientOptions) {
    this.serverUrl = options.serverUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  async me(): Promise<UserView> {
    return (await this.request<{ data: UserView }>("GET", "/v1/users/me")).data;
  }

  async createUser(input: { username: string; email?: string; admin?: boolean }): Promise<CreatedUserView> {
    return (await this.request<{ data: CreatedUserView }>("POST", "/v1/users", input)).data;
  }

  listApiKeys(page: PageParams = {}): Promise<Page<ApiKeyView>> {
    return this.request("GET", `/v1/users/me/api_keys${queryString(page)}`);
  }

  async createApiKey(name?: string): Promise<IssuedApiKeyView> {
    return (await this.request<{ data: IssuedApiKeyView }>("POST", "/v1/users/me/api_keys", name ? { name } : {})).data;
  }

  async revokeApiKey(id: string): Promise<void> {
    await this.request("DELETE", `/v1/users/me/api_keys/${encodeURIComponent(id)}`);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(`${this.serverUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new ConnectionError(this.serverUrl, describeFetchFailure(error));
    }
    const text = await response.text();
    if (!response.ok) throw toApiError(response.status, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

function queryString(params: PageParams): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

function toApiError(status: number, text: string): ApiError {
  try {
    const { error } = JSON.parse(text) as ErrorBody;
    if (error && typeof error.message === "string") return new ApiError(status, error.code, error.message, error.details);
  } catch {
    // Not our JSON error body (a proxy in between, say): fall through.
  }
  return new ApiError(status, "HttpError", `The server answered ${status}: ${text.slice(0, 200) || "(no body)"}`);
}

function describeFetchFailure(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "no answer in time";
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
