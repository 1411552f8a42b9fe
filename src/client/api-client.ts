import { cutAtWord } from "../domain/error-text.js";
import type { Static } from "@sinclair/typebox";
import type { ErrorBody } from "../api/error-mapping.js";
import type { ApiKeyView, CreatedUserView, IssuedApiKeyView, UserView } from "../api/schemas/accounts.js";
import type { EnvVarSchema } from "../api/schemas/env-vars.js";
import type { SignInLinkView } from "../api/schemas/sessions.js";
import type { AccountSchema, AppSchema } from "../api/schemas/apps.js";
import type { OutboxMailView } from "../api/schemas/outbox.js";
import type { StatusView } from "../api/schemas/status.js";
import type { DataStoreRecordView, DataStoreView } from "../api/schemas/data-stores.js";
import type { PublishedComponentView, RegistryEntryView, RegistryListingView } from "../api/schemas/registry.js";
import type { ErrorSummaryView, RunView, SubscriptionSchema, WorkflowBodySchema, WorkflowView } from "../api/schemas/workflows.js";
import type {
  ComponentInputFields,
  ComponentView,
  DeployBodySchema,
  EventSummaryView,
  LogSchema,
  SourceView,
  UpdateBodySchema,
} from "../api/schemas/sources.js";
import type { CreatedWebhookView, WebhookDeliveryView, WebhookView } from "../api/schemas/webhooks.js";
import type { Page } from "../domain/paging.js";
import type { WaitingEventView } from "../api/schemas/run-gate.js";
import { SseParser, type SseMessage } from "./sse-parser.js";

export type { ComponentView, EventSummaryView, SourceView } from "../api/schemas/sources.js";
export type { PublishedComponentView, RegistryEntryView, RegistryListingView } from "../api/schemas/registry.js";

/** Filters of the registry listing (GET /v1/components/registry). */
export interface RegistryQuery {
  q?: string | undefined;
  app?: string | undefined;
  type?: "source" | "action" | "app" | undefined;
  namespace?: "catalog" | "user" | undefined;
}
export type { SseMessage } from "./sse-parser.js";
export type { SignInLinkView } from "../api/schemas/sessions.js";
export type { OutboxMailView } from "../api/schemas/outbox.js";
export type { DataStoreRecordView, DataStoreView } from "../api/schemas/data-stores.js";
export type EnvVarView = Static<typeof EnvVarSchema>;
export type AccountView = Static<typeof AccountSchema>;
export type AppView = Static<typeof AppSchema>;
/** Where to send the browser to connect (or reconnect) an OAuth account. */
export interface AuthorizationView {
  authorization_url: string;
  expires_at: number;
}
export type { ErrorSummaryView, RunView, WorkflowView } from "../api/schemas/workflows.js";
export type { WaitingEventView } from "../api/schemas/run-gate.js";
export type { CreatedWebhookView, WebhookDeliveryView, WebhookView } from "../api/schemas/webhooks.js";
export type WorkflowBody = Static<typeof WorkflowBodySchema>;
export type SubscriptionView = Static<typeof SubscriptionSchema>;
/** A subscription's key: the emitter (an id, or `p_*` / `dc_*`), the listening workflow, and a channel ("" is the default one). */
export interface SubscriptionKey {
  emitterId: string;
  listenerId: string;
  eventName?: string | undefined;
}
/** An error replayed: the `$errors` event and the original event the new run gets. */
export interface ReplayedView {
  error_id: string;
  event_id: string;
}
/** An error a bulk replay could not replay as asked, and why. */
export interface NotReplayedView {
  error_id: string;
  reason: string;
}
/** Where a replay starts and whose code it runs (each absent: the default, "trigger" and "current"). */
export interface ReplayChoiceBody {
  from?: "trigger" | "failed_step";
  with_code?: "current" | "failed_run";
}
/** One kept version of a workflow (GET /v1/workflows/:id/versions). */
export interface WorkflowVersionView {
  version: number;
  current: boolean;
  deployment_id: string;
  saved_at_ms: number;
  steps: Array<{ id: string; name: string; component_id: string | null; key: string | null; props: Record<string, unknown> }>;
}
/** One entry of a component's `configurable_props` (the schema types them only as objects). */
export type { ConfigurableProp } from "../domain/component-rules.js";
export type LogView = Static<typeof LogSchema>;
export type ComponentInput = { [K in keyof typeof ComponentInputFields]?: string };
export type DeployInput = Static<typeof DeployBodySchema>;
export type UpdateInput = Static<typeof UpdateBodySchema>;

/** What `POST /v1/sources/:id/run` answers (the route declares the shape inline). */
export interface RunResultView {
  ok: boolean;
  duration_ms: number;
  events: EventSummaryView[];
  error?: { code: string; name: string; message: string; stack?: string };
}

export interface PropOptionsView {
  options: unknown[];
  context: unknown;
}

/** One message of a source's live stream: an item, or the server saying the stream is over (the source was deleted). */
export type LiveMessage<T> = { kind: "item"; item: T; channel: string } | { kind: "closed"; reason: string };

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
    return this.data<UserView>("GET", "/v1/users/me");
  }

  /** Changes your own account (today: the e-mail address; null removes it). */
  async updateMe(input: { email: string | null }): Promise<UserView> {
    return this.data<UserView>("PATCH", "/v1/users/me", input);
  }

  async createUser(input: { username: string; email?: string; admin?: boolean }): Promise<CreatedUserView> {
    return this.data<CreatedUserView>("POST", "/v1/users", input);
  }

  listApiKeys(page: PageParams = {}): Promise<Page<ApiKeyView>> {
    return this.request("GET", `/v1/users/me/api_keys${queryString(page)}`);
  }

  async createApiKey(name?: string): Promise<IssuedApiKeyView> {
    return this.data<IssuedApiKeyView>("POST", "/v1/users/me/api_keys", name ? { name } : {});
  }

  /** A one-time link that signs a browser in to the web console as this key's user, valid for a minute. */
  async createSignInLink(): Promise<SignInLinkView> {
    return this.data<SignInLinkView>("POST", "/v1/sessions/links");
  }

  async revokeApiKey(id: string): Promise<void> {
    await this.request("DELETE", `/v1/users/me/api_keys/${encodeURIComponent(id)}`);
  }

  /** Your environment variables, by name; a secret one's value is null. */
  listEnvVars(): Promise<Page<EnvVarView>> {
    return this.request("GET", "/v1/env");
  }

  setEnvVar(name: string, value: string, secret: boolean): Promise<EnvVarView> {
    return this.data<EnvVarView>("PUT", `/v1/env/${encodeURIComponent(name)}`, { value, secret });
  }

  async unsetEnvVar(name: string): Promise<void> {
    await this.request("DELETE", `/v1/env/${encodeURIComponent(name)}`);
  }

  /** The apps this server knows, and how accounts of each connect. */
  listApps(): Promise<Page<AppView>> {
    return this.request("GET", "/v1/apps");
  }

  getApp(slug: string): Promise<AppView> {
    return this.data<AppView>("GET", `/v1/apps/${encodeURIComponent(slug)}`);
  }

  /** Your connected accounts (never a secret). */
  listAccounts(): Promise<Page<AccountView>> {
    return this.request("GET", "/v1/accounts");
  }

  getAccount(id: string): Promise<AccountView> {
    return this.data<AccountView>("GET", `/v1/accounts/${encodeURIComponent(id)}`);
  }

  /** A key-based app's account, from its fields. */
  createAccount(input: { app: string; name: string; fields: Record<string, string> }): Promise<AccountView> {
    return this.data<AccountView>("POST", "/v1/accounts", input);
  }

  startOAuth(input: { app: string; name: string }): Promise<AuthorizationView> {
    return this.data<AuthorizationView>("POST", "/v1/accounts/oauth/start", input);
  }

  /** A key-based account takes new fields at once (an account back); an OAuth one answers where to send the browser. */
  reconnectAccount(id: string, fields?: Record<string, string>): Promise<AccountView | AuthorizationView> {
    return this.data<AccountView | AuthorizationView>("POST", `/v1/accounts/${encodeURIComponent(id)}/reconnect`, fields ? { fields } : {});
  }

  renameAccount(id: string, name: string): Promise<AccountView> {
    return this.data<AccountView>("PATCH", `/v1/accounts/${encodeURIComponent(id)}`, { name });
  }

  async deleteAccount(id: string): Promise<void> {
    await this.request("DELETE", `/v1/accounts/${encodeURIComponent(id)}`);
  }

  /** The installation's processes and queues (admins). */
  status(): Promise<StatusView> {
    return this.request("GET", "/v1/status");
  }

  /** Your mails, newest first, with their delivery status. */
  listOutbox(page: PageParams = {}): Promise<Page<OutboxMailView>> {
    return this.request("GET", `/v1/outbox${queryString(page)}`);
  }

  /** Your data stores, by name, with how many records each holds. */
  listDataStores(): Promise<Page<DataStoreView>> {
    return this.request("GET", "/v1/data_stores");
  }

  /** A page of a store's records, by key. */
  listDataStoreRecords(name: string, page: { limit?: number; after?: string } = {}): Promise<Page<DataStoreRecordView>> {
    return this.request("GET", `${dataStorePath(name)}/records${queryString(page)}`);
  }

  getDataStoreRecord(name: string, key: string): Promise<DataStoreRecordView> {
    return this.data<DataStoreRecordView>("GET", `${dataStorePath(name)}/records/${encodeURIComponent(key)}`);
  }

  /** Writes a record; `ttl` in seconds. */
  setDataStoreRecord(name: string, key: string, value: unknown, ttl?: number): Promise<DataStoreRecordView> {
    return this.data<DataStoreRecordView>("PUT", `${dataStorePath(name)}/records/${encodeURIComponent(key)}`, ttl === undefined ? { value } : { value, ttl });
  }

  async deleteDataStoreRecord(name: string, key: string): Promise<void> {
    await this.request("DELETE", `${dataStorePath(name)}/records/${encodeURIComponent(key)}`);
  }

  async deleteDataStore(name: string): Promise<void> {
    await this.request("DELETE", dataStorePath(name));
  }

  async saveComponent(input: ComponentInput): Promise<ComponentView> {
    return this.data<ComponentView>("POST", "/v1/components", input);
  }

  async getComponent(idOrKey: string): Promise<ComponentView> {
    return this.data<ComponentView>("GET", `/v1/components/${encodeURIComponent(idOrKey)}`);
  }

  /** Publishes to your registry (the code's key and semantic version); the same version with the same code again is no change. */
  async publishComponent(input: ComponentInput): Promise<PublishedComponentView> {
    return this.data<PublishedComponentView>("POST", "/v1/components/registry", input);
  }

  /** Every version you published (not the catalog's): keys alphabetically, each key's versions newest first. */
  async listPublished(): Promise<RegistryEntryView[]> {
    const entries: RegistryEntryView[] = [];
    for (const listing of await this.listAllRegistry({ namespace: "user" })) {
      for (const version of listing.versions) entries.push({ key: listing.key, version: version.version, kind: listing.type, published_at: version.published_at });
    }
    return entries;
  }

  /** One page of the registry (Runnel's catalog and what you published), one item per key, keys alphabetically. */
  listRegistry(query: RegistryQuery & PageParams = {}): Promise<Page<RegistryListingView>> {
    return this.request("GET", `/v1/components/registry${queryString(query)}`);
  }

  /** Every page of the registry listing. */
  async listAllRegistry(query: RegistryQuery = {}): Promise<RegistryListingView[]> {
    const listings: RegistryListingView[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.listRegistry({ ...query, limit: 100, ...(after ? { after } : {}) });
      listings.push(...page.data);
      if (page.data.length < 100 || !page.page_info.end_cursor) return listings;
      after = page.page_info.end_cursor;
    }
  }

  /** A published component: the given version, or the highest release. */
  async getPublished(key: string, version?: string): Promise<PublishedComponentView> {
    return this.data<PublishedComponentView>("GET", `/v1/components/registry/${encodeURIComponent(key)}${queryString({ version })}`);
  }

  async deploySource(input: DeployInput): Promise<SourceView> {
    return this.data<SourceView>("POST", "/v1/sources", input);
  }

  async getSource(idOrSlug: string): Promise<SourceView> {
    return this.data<SourceView>("GET", sourcePath(idOrSlug));
  }

  async updateSource(idOrSlug: string, input: UpdateInput): Promise<SourceView> {
    return this.data<SourceView>("PUT", sourcePath(idOrSlug), input);
  }

  async deleteSource(idOrSlug: string): Promise<void> {
    await this.request("DELETE", sourcePath(idOrSlug));
  }

  listSources(page: PageParams = {}): Promise<Page<SourceView>> {
    return this.request("GET", `/v1/users/me/sources${queryString(page)}`);
  }

  /** Newest first. `expand` asks for full event bodies (else bodies over 1 KB are left out). */
  listEventSummaries(idOrSlug: string, query: PageParams & { expand?: boolean; eventName?: string } = {}): Promise<Page<EventSummaryView>> {
    const { expand, eventName, ...page } = query;
    return this.request("GET", `${sourcePath(idOrSlug)}/event_summaries${queryString({ ...page, expand: expand ? "event" : undefined, event_name: eventName })}`);
  }

  /** Newest first. */
  listLogs(idOrSlug: string, page: PageParams = {}): Promise<Page<LogView>> {
    return this.request("GET", `${sourcePath(idOrSlug)}/logs${queryString(page)}`);
  }

  /** Runs the source now, with `event` (a timer source gets a timer event when none is given). */
  async runSource(idOrSlug: string, event?: unknown): Promise<RunResultView> {
    return this.data<RunResultView>("POST", `${sourcePath(idOrSlug)}/run`, event === undefined ? {} : { event });
  }

  async propOptions(idOrSlug: string, prop: string, args: { page?: number; prevContext?: unknown; query?: string } = {}): Promise<PropOptionsView> {
    const path = `${sourcePath(idOrSlug)}/props/${encodeURIComponent(prop)}/options`;
    return this.data<PropOptionsView>("POST", path, args);
  }

  async createWorkflow(body: WorkflowBody): Promise<WorkflowView> {
    return this.data<WorkflowView>("POST", "/v1/workflows", body);
  }

  async getWorkflow(idOrSlug: string): Promise<WorkflowView> {
    return this.data<WorkflowView>("GET", workflowPath(idOrSlug));
  }

  /** Fields left out stay as they are; an inline trigger keeps its id and endpoint. */
  async updateWorkflow(idOrSlug: string, body: WorkflowBody): Promise<WorkflowView> {
    return this.data<WorkflowView>("PUT", workflowPath(idOrSlug), body);
  }

  async deleteWorkflow(idOrSlug: string): Promise<void> {
    await this.request("DELETE", workflowPath(idOrSlug));
  }

  listWorkflows(page: PageParams = {}): Promise<Page<WorkflowView>> {
    return this.request("GET", `/v1/users/me/workflows${queryString(page)}`);
  }

  /** The workflow's runs, newest first. */
  listRuns(idOrSlug: string, page: PageParams = {}): Promise<Page<RunView>> {
    return this.request("GET", `${workflowPath(idOrSlug)}/runs${queryString(page)}`);
  }

  async getRun(runId: string): Promise<RunView> {
    return this.data<RunView>("GET", `/v1/runs/${encodeURIComponent(runId)}`);
  }

  /** Cancels a delayed or retrying run (the run, cancelled) or a running one (it stops before its next step: `cancelling`). */
  async cancelRun(runId: string): Promise<RunView | { run_id: string; status: "cancelling" }> {
    return this.data<RunView | { run_id: string; status: "cancelling" }>("POST", `/v1/runs/${encodeURIComponent(runId)}/cancel`);
  }

  /** The events waiting at the workflow's gate (settings.concurrency), in line order; cursors are event ids. */
  listWaiting(idOrSlug: string, page: PageParams = {}): Promise<Page<WaitingEventView>> {
    return this.request("GET", `${workflowPath(idOrSlug)}/waiting${queryString(page)}`);
  }

  /** Cancels an event waiting at the workflow's gate: it never runs; the answer is its run, recorded cancelled. */
  async cancelWaiting(idOrSlug: string, eventId: string): Promise<RunView> {
    return this.data<RunView>("POST", `${workflowPath(idOrSlug)}/waiting/${encodeURIComponent(eventId)}/cancel`);
  }

  /** The workflow's `$errors`, newest first; `expand` includes each error and its original event. */
  listErrors(idOrSlug: string, query: PageParams & { expand?: boolean } = {}): Promise<Page<ErrorSummaryView>> {
    const { expand, ...page } = query;
    return this.request("GET", `${workflowPath(idOrSlug)}/$errors/event_summaries${queryString({ ...page, expand: expand ? "event" : undefined })}`);
  }

  /** Runs the workflow again on the error's original event (from the trigger, or from the failed step); the run's replay_of names the error. */
  async replayError(idOrSlug: string, errorId: string, choice: ReplayChoiceBody = {}): Promise<ReplayedView> {
    const body = choice.from !== undefined || choice.with_code !== undefined ? choice : undefined;
    return this.data<ReplayedView>("POST", `${workflowPath(idOrSlug)}/$errors/${encodeURIComponent(errorId)}/replay`, body);
  }

  /** Replays the given errors, or every listed one (of one code, one step id); `not_replayed` says which could not be, and why. */
  async replayErrors(
    idOrSlug: string,
    filter: { eventIds?: string[]; code?: string; stepId?: string } & ReplayChoiceBody = {},
  ): Promise<{ count: number; replayed: ReplayedView[]; not_replayed: NotReplayedView[] }> {
    const body = { event_ids: filter.eventIds, code: filter.code, step_id: filter.stepId, from: filter.from, with_code: filter.with_code };
    return (await this.request<{ data: { count: number; replayed: ReplayedView[]; not_replayed: NotReplayedView[] } }>("POST", `${workflowPath(idOrSlug)}/$errors/replay`, body)).data;
  }

  /** The workflow's kept versions, newest first. */
  async listWorkflowVersions(idOrSlug: string, query: { limit?: number; before?: number } = {}): Promise<{ data: WorkflowVersionView[]; current_version: number }> {
    return this.request("GET", `${workflowPath(idOrSlug)}/versions${queryString(query)}`);
  }

  async listSubscriptions(): Promise<SubscriptionView[]> {
    return this.data<SubscriptionView[]>("GET", "/v1/users/me/subscriptions");
  }

  async subscribe(key: SubscriptionKey): Promise<SubscriptionView> {
    return this.data<SubscriptionView>("POST", `/v1/subscriptions${subscriptionQuery(key)}`);
  }

  async unsubscribe(key: SubscriptionKey): Promise<void> {
    await this.request("DELETE", `/v1/subscriptions${subscriptionQuery(key)}`);
  }

  /** Creates a webhook; the answer holds its signing secret, which the server never shows again. */
  async createWebhook(input: { url: string; name?: string | undefined; description?: string | undefined }): Promise<CreatedWebhookView> {
    return this.data<CreatedWebhookView>("POST", "/v1/webhooks", input);
  }

  listWebhooks(page: PageParams = {}): Promise<Page<WebhookView>> {
    return this.request("GET", `/v1/users/me/webhooks${queryString(page)}`);
  }

  async deleteWebhook(id: string): Promise<void> {
    await this.request("DELETE", `/v1/webhooks/${encodeURIComponent(id)}`);
  }

  /** What became of each event sent to the webhook, newest first. */
  listWebhookDeliveries(id: string, page: PageParams = {}): Promise<Page<WebhookDeliveryView>> {
    return this.request("GET", `/v1/webhooks/${encodeURIComponent(id)}/deliveries${queryString(page)}`);
  }

  /**
   * Follows a source's emitted events. Resolves once the server is listening,
   * so nothing emitted after that is missed; then iterate. Ends when `signal`
   * aborts, the server closes the stream, or the connection drops.
   */
  async followEvents(idOrSlug: string, signal: AbortSignal): Promise<AsyncIterable<LiveMessage<EventSummaryView>>> {
    const messages = await this.openStream(`${sourcePath(idOrSlug)}/sse`, signal);
    return mapLive(messages, (message) => {
      const item = JSON.parse(message.data) as EventSummaryView;
      // Channels cannot start with "$", so "$closed" is always the end of the stream.
      if (message.event === "$closed") return { kind: "closed", reason: String((item as { reason?: unknown }).reason ?? "") };
      return { kind: "item", item, channel: item.metadata?.name ?? "" };
    });
  }

  /** Follows a source's logs as they are written; see followEvents. */
  async followLogs(idOrSlug: string, signal: AbortSignal): Promise<AsyncIterable<LiveMessage<LogView>>> {
    const messages = await this.openStream(`${sourcePath(idOrSlug)}/logs/sse`, signal);
    return mapLive(messages, (message) => {
      const data = JSON.parse(message.data) as unknown;
      if (message.event === "$closed") return { kind: "closed", reason: String((data as { reason?: unknown }).reason ?? "") };
      return message.event === "log" ? { kind: "item", item: data as LogView, channel: "log" } : null;
    });
  }

  /**
   * Opens a text/event-stream and resolves when the server has answered
   * (a refusal becomes an ApiError here); the messages are read as they come.
   * Only the wait for the answer is timed: a stream may rightly stay quiet for hours.
   */
  async openStream(path: string, signal: AbortSignal): Promise<AsyncIterable<SseMessage>> {
    if (signal.aborted) return emptyStream();
    // Ours, so that a timeout can end the wait for the answer; the caller's signal ends it and, later, the body.
    const controller = new AbortController();
    const stopConnecting = () => controller.abort(signal.reason);
    signal.addEventListener("abort", stopConnecting, { once: true });
    const timer = setTimeout(() => controller.abort(new DOMException("no answer in time", "TimeoutError")), this.timeoutMs);
    let response: Response;
    try {
      response = await fetch(`${this.serverUrl}${path}`, {
        headers: { authorization: `Bearer ${this.apiKey}`, accept: "text/event-stream" },
        signal: controller.signal,
      });
    } catch (error) {
      signal.removeEventListener("abort", stopConnecting);
      if (signal.aborted) return emptyStream();
      throw new ConnectionError(this.serverUrl, describeFetchFailure(controller.signal.reason ?? error));
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) {
      signal.removeEventListener("abort", stopConnecting);
      throw toApiError(response.status, await response.text());
    }
    return readStream(response, signal, () => signal.removeEventListener("abort", stopConnecting), this.serverUrl);
  }

  /** A call whose answer is `{ data }`: the data. */
  private async data<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.request<{ data: T }>(method, path, body)).data;
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

function sourcePath(idOrSlug: string): string {
  return `/v1/sources/${encodeURIComponent(idOrSlug)}`;
}

function workflowPath(idOrSlug: string): string {
  return `/v1/workflows/${encodeURIComponent(idOrSlug)}`;
}

function subscriptionQuery(key: SubscriptionKey): string {
  return queryString({ emitter_id: key.emitterId, listener_id: key.listenerId, event_name: key.eventName });
}

async function* emptyStream(): AsyncGenerator<SseMessage> {}

/** The messages of an answered stream; aborting `signal` ends it quietly, a dropped connection loudly. */
async function* readStream(response: Response, signal: AbortSignal, done: () => void, serverUrl: string): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = response.body?.getReader();
  if (!reader) return;
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal.aborted) return;
        throw new ConnectionError(serverUrl, `the stream broke: ${describeFetchFailure(error)}`);
      }
      if (chunk.done) return;
      yield* parser.push(decoder.decode(chunk.value, { stream: true }));
    }
  } finally {
    done();
    // Leaving early (break, return, abort) must close the connection, or it keeps the process alive.
    await reader.cancel().catch(() => undefined);
  }
}

async function* mapLive<T>(messages: AsyncIterable<SseMessage>, map: (message: SseMessage) => LiveMessage<T> | null): AsyncGenerator<LiveMessage<T>> {
  for await (const message of messages) {
    const live = map(message);
    if (!live) continue;
    yield live;
    if (live.kind === "closed") return;
  }
}

function queryString(params: object): string {
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
  return new ApiError(status, "HttpError", `The server answered ${status}: ${cutAtWord(text, 200) || "(no body)"}`);
}

function describeFetchFailure(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "no answer in time";
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

function dataStorePath(name: string): string {
  return `/v1/data_stores/${encodeURIComponent(name)}`;
}
