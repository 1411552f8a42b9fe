import type { ValidatedComponent } from "../../domain/component-rules.js";
import { ConflictError, NotFoundError, SourceFailedError, ValidationError } from "../../domain/errors.js";
import type { PageRequest, PageSlice } from "../../domain/paging.js";
import type { DeployedSource, LogEntry, SavedComponent, StoredEvent } from "../../domain/sources.js";
import type { Workflow } from "../../domain/workflows.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { Store } from "../../store/store.js";
import type { EmitterEventStats } from "../../domain/activity.js";
import type { ComponentInput, ComponentLoader } from "../component-loader.js";
import type { EventHub, HubMessage } from "../event-hub.js";
import { ExpiringCache } from "../expiring-cache.js";
import { errorHeadline } from "../../domain/error-text.js";
import { EndpointAdmission } from "./endpoint-admission.js";
import { type InvocationResult, type SourceInvoker } from "./invoker.js";
import type { ComponentRef, DeployInput, SourceLifecycle, UpdateInput } from "./lifecycle.js";
import { openSecrets } from "./props.js";
import { isSealed, type SecretBox } from "../secrets.js";
import { timerEvent } from "./timer-schedule.js";
import type { RunEnd } from "../workflows/workflow-responses.js";

/**
 * The HTTP request a source's endpoint received, as `run` sees it but for
 * `body`: the runner parses that from `bodyRaw` (a call with `httpBody`).
 */
export interface HttpEvent {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  bodyRaw: string;
}

/** How a workflow answered (or failed to answer) the HTTP request whose event triggered it. */
export type WorkflowEnd = RunEnd | { kind: "timeout"; seconds: number };

/** A request to an endpoint, handled: the run's result, and the workflow's answer when one answers for the source. */
export interface HttpHandled {
  customResponse: boolean;
  result: InvocationResult;
  workflowEnd?: WorkflowEnd;
}

export interface SourcesServiceOptions {
  /**
   * For a source whose events trigger a workflow that responds itself: waits
   * for that workflow's answer to the request that made `event`; null when no
   * such workflow listens.
   */
  awaitWorkflow?: (source: DeployedSource, event: StoredEvent) => Promise<WorkflowEnd | null>;
  /**
   * The workflows whose runs answer a source's HTTP callers, when known now
   * (see AwaitedResponses.respondingWorkflows): for a source without run, the
   * deliveries of a caller's event to them are handed over without a row.
   */
  respondingWorkflows?: (source: DeployedSource) => readonly string[] | Promise<readonly string[]>;
  store: Store;
  loader: ComponentLoader;
  invoker: SourceInvoker;
  lifecycle: SourceLifecycle;
  hub: EventHub;
  secrets: SecretBox;
  /** Bounds the endpoint requests waiting for their runs (default: DEFAULT_ADMISSION_LIMITS). */
  admission?: EndpointAdmission;
  /** Runs a source's "run now" on a worker process (role api); absent: it runs in this process. */
  runOnWorker?: (source: DeployedSource, event: unknown) => Promise<InvocationResult>;
}

/** A source's HTTP endpoint, as each request to it needs it. */
interface Endpoint {
  source: DeployedSource;
  customResponse: boolean;
  hasRun: boolean;
}

/** Everything the API does with components and sources, scoped by the caller's id. */
/**
 * How long an endpoint's source is remembered between requests. Changes made
 * through this process clear it at once, and so does another process's
 * "changed" message (ChangesAcrossProcesses). Each batch of runs reads the
 * source afresh anyway.
 */
const ENDPOINT_CACHE_MS = 1_000;

export class SourcesService {
  private readonly endpoints = new ExpiringCache<string, Endpoint>({ ttlMs: ENDPOINT_CACHE_MS, maxEntries: 10_000 });
  private endpointsGeneration = 0;

  private readonly admission: EndpointAdmission;

  constructor(private readonly options: SourcesServiceOptions) {
    this.admission = options.admission ?? new EndpointAdmission();
  }

  /** A source changed, here or in another process: every endpoint is looked up again (they are keyed by token, not id). */
  forgetEndpoints(): void {
    this.endpointsGeneration += 1;
    this.endpoints.clear();
  }

  saveComponent(ownerId: string, input: ComponentInput) {
    return this.options.loader.save(ownerId, input);
  }

  async getComponent(ownerId: string, idOrKey: string): Promise<{ component: SavedComponent; validated: ValidatedComponent }> {
    const component = await this.options.store.findComponent(ownerId, idOrKey);
    if (!component) throw new NotFoundError("component", idOrKey);
    return { component, validated: this.options.loader.validatedOf(component) };
  }

  deploy(ownerId: string, input: DeployInput) {
    return this.options.lifecycle.deploy(ownerId, input);
  }

  async update(ownerId: string, idOrSlug: string, input: UpdateInput) {
    try {
      return await this.options.lifecycle.update(ownerId, idOrSlug, input);
    } finally {
      this.forgetEndpoints();
    }
  }

  async remove(ownerId: string, idOrSlug: string) {
    try {
      return await this.options.lifecycle.remove(ownerId, idOrSlug);
    } finally {
      this.forgetEndpoints();
    }
  }

  /**
   * The route's update: a workflow's own trigger is refused (409 naming the
   * workflow), since changing it behind the workflow's back breaks it; the
   * workflow changes it through `update`.
   */
  async updateUnowned(ownerId: string, idOrSlug: string, input: UpdateInput): Promise<DeployedSource> {
    await this.refuseWorkflowTrigger(ownerId, idOrSlug, "changed");
    return this.update(ownerId, idOrSlug, input);
  }

  /** The route's delete: a workflow's own trigger goes only with its workflow. */
  async removeUnowned(ownerId: string, idOrSlug: string): Promise<void> {
    await this.refuseWorkflowTrigger(ownerId, idOrSlug, "deleted");
    return this.remove(ownerId, idOrSlug);
  }

  /** The workflow whose own (inline) trigger this source is, or null. */
  async owningWorkflow(ownerId: string, sourceId: string): Promise<Workflow | null> {
    const workflows = await this.options.store.workflowsTriggeredBy(ownerId, sourceId);
    return workflows.find((workflow) => workflow.triggerOwned) ?? null;
  }

  private async refuseWorkflowTrigger(ownerId: string, idOrSlug: string, verb: "changed" | "deleted"): Promise<void> {
    const source = await this.get(ownerId, idOrSlug);
    const workflow = await this.owningWorkflow(ownerId, source.id);
    if (!workflow) return;
    const instead = verb === "deleted" ? `delete the workflow instead (runnel delete ${workflow.nameSlug})` : `change the workflow's trigger instead (edit its file and runnel deploy --update, or PUT /v1/workflows/${workflow.id})`;
    throw new ConflictError(`Source ${source.nameSlug} (${source.id}) is the trigger of workflow "${workflow.name}" (${workflow.id}) and cannot be ${verb} on its own: ${instead}.`, {
      workflow_id: workflow.id,
      workflow_name: workflow.name,
    });
  }

  get(ownerId: string, idOrSlug: string): Promise<DeployedSource> {
    return this.options.lifecycle.find(ownerId, idOrSlug);
  }

  list(ownerId: string, page: PageRequest): Promise<PageSlice<DeployedSource>> {
    return this.options.store.listSources(ownerId, page);
  }

  /** Events each source keeps and when the newest came, for a page of the owner's sources at once. */
  eventStats(ownerId: string, sourceIds: string[]): Promise<Map<string, EmitterEventStats>> {
    return this.options.store.eventStats(ownerId, sourceIds);
  }

  async componentOf(source: DeployedSource) {
    return this.options.invoker.componentOf(source);
  }

  /** The "run now" control: a timer source gets a timer event, any other the given event (or none). */
  async runNow(ownerId: string, idOrSlug: string, event: unknown): Promise<InvocationResult> {
    const source = await this.get(ownerId, idOrSlug);
    const payload = event ?? (source.timer ? timerEvent(source.timer, Date.now()) : undefined);
    if (this.options.runOnWorker) return this.options.runOnWorker(source, payload);
    return this.options.invoker.invoke(source, { kind: "run", event: payload }, "manual");
  }

  /** Calls a prop's async options method with what the UI or CLI knows so far. */
  async propOptions(ownerId: string, idOrSlug: string, prop: string, args: { page?: number; prevContext?: unknown; query?: string }) {
    const source = await this.get(ownerId, idOrSlug);
    const { validated } = await this.componentOf(source);
    const declared = validated.props.find((candidate) => candidate.name === prop);
    if (!declared) throw new NotFoundError("prop", prop);
    if (declared.options) return { options: declared.options, context: null };
    if (!declared.remoteOptions) throw new ValidationError("prop", `Prop "${prop}" has no options.`);
    const configured = openSecrets(source.configuredProps, this.options.secrets);
    return optionsFrom(prop, await this.options.invoker.invoke(source, optionsCall(prop, configured, args), "options"));
  }

  /**
   * A prop's options for a component not deployed yet (the deploy form): its
   * static options, or what its async options method returns, run in the
   * sandbox on a draft source that is never stored, with the earlier props'
   * values the form has so far.
   */
  async draftPropOptions(
    ownerId: string,
    ref: ComponentRef,
    prop: string,
    args: { configuredProps?: Record<string, unknown> | undefined; page?: number | undefined; prevContext?: unknown; query?: string | undefined },
  ) {
    const configured = args.configuredProps ?? {};
    for (const [name, value] of Object.entries(configured)) {
      // Sealed text is the server's own ciphertext: opening a caller's copy in their runner would hand them what it hides.
      if (isSealed(value)) throw new ValidationError(`configured_props.${name}`, `configured_props.${name} holds an encrypted value; give the value itself.`);
    }
    const { source, component } = await this.options.lifecycle.draft(ownerId, ref, configured);
    const declared = component.validated.props.find((candidate) => candidate.name === prop);
    if (!declared) {
      const names = component.validated.props.map((candidate) => candidate.name).join(", ") || "none";
      throw new ValidationError("prop", `"${component.validated.name}" has no prop "${prop}" (its props: ${names}).`);
    }
    if (declared.options) return { options: declared.options, context: null };
    if (!declared.remoteOptions) throw new ValidationError("prop", `Prop "${prop}" has no options: it takes a value typed in.`);
    const { result } = await this.options.invoker.call(source, component, optionsCall(prop, configured, args), "options", {});
    return optionsFrom(prop, result);
  }

  async events(ownerId: string, idOrSlug: string, query: { channel?: string | null; page: PageRequest }): Promise<PageSlice<StoredEvent>> {
    const source = await this.get(ownerId, idOrSlug);
    return this.options.store.listEvents(ownerId, source.id, query);
  }

  async deleteEvents(ownerId: string, idOrSlug: string, range: { startId?: string | undefined; endId?: string | undefined; channel?: string | undefined }): Promise<number> {
    const source = await this.get(ownerId, idOrSlug);
    return this.options.store.deleteEvents(ownerId, source.id, range);
  }

  async logs(ownerId: string, idOrSlug: string, page: PageRequest): Promise<PageSlice<LogEntry>> {
    const source = await this.get(ownerId, idOrSlug);
    return this.options.store.listLogs(ownerId, source.id, page);
  }

  /** Follows a source's live events and logs; the caller must call the returned function to stop. */
  async follow(ownerId: string, idOrSlug: string, listener: (message: HubMessage) => void): Promise<{ source: DeployedSource; stop: () => void }> {
    const source = await this.get(ownerId, idOrSlug);
    return { source, stop: await this.options.hub.follow(source.id, listener, (eventId) => this.options.store.findEvent(ownerId, source.id, eventId)) };
  }

  /**
   * A request to a source's endpoint. Resolves once the run is over and its
   * events are durable; `respond` is called as soon as the component answers
   * itself (customResponse), which may be before.
   */
  handleHttp(token: string, request: HttpEvent, respond: (response: HttpResponse) => void): Promise<HttpHandled> {
    // The hottest path of the server: a cached endpoint goes straight to the invoker, without a lookup's promise.
    const run = (endpoint: Endpoint) => this.runHttp(endpoint, request, respond);
    const cached = this.endpoints.get(token);
    return cached ? run(cached) : this.endpoint(token).then(run);
  }

  /** Admitted (or refused at once, before any work), the request runs; its place is given back once it is handled. */
  private runHttp(endpoint: Endpoint, request: HttpEvent, respond: (response: HttpResponse) => void): Promise<HttpHandled> {
    let release: () => void;
    try {
      release = this.admission.admit(endpoint.source.ownerId);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.runAdmitted(endpoint, request, respond).finally(release);
  }

  private runAdmitted({ source, customResponse, hasRun }: Endpoint, request: HttpEvent, respond: (response: HttpResponse) => void): Promise<HttpHandled> {
    const call = { kind: "run" as const, event: request, httpBody: true };
    if (!customResponse || !this.options.awaitWorkflow) {
      return this.options.invoker.invoke(source, call, "http", { onRespond: customResponse ? respond : undefined }).then((result) => ({ customResponse, result }));
    }
    let responded = false;
    const answer = (response: HttpResponse) => {
      responded = true;
      respond(response);
    };
    // Without run, the request is the one event, and this caller waits for the responding workflows' runs.
    const responders = hasRun ? undefined : this.options.respondingWorkflows?.(source);
    const invoke = (holdFor: readonly string[] | undefined) => this.options.invoker.invoke(source, call, "http", { onRespond: answer, holdFor: holdFor?.length ? holdFor : undefined });
    // Known (the usual case): no promise in between.
    const invoked = responders instanceof Promise ? responders.then(invoke) : invoke(responders);
    return invoked.then(async (result) => {
      // The source left the answer to a workflow it triggers ($.respond), if one is set to respond itself.
      if (!responded && result.ok && result.events.length > 0) {
        const workflowEnd = await this.options.awaitWorkflow!(source, result.events[0]!);
        if (workflowEnd) return { customResponse, result, workflowEnd };
      }
      return { customResponse, result };
    });
  }

  private async endpoint(token: string): Promise<Endpoint> {
    const cached = this.endpoints.get(token);
    if (cached) return cached;
    // A change announced while the source is read (see forgetEndpoints) leaves what was read unkept.
    const generation = this.endpointsGeneration;
    const source = await this.options.store.findSourceByEndpoint(token);
    if (!source || !source.active) {
      this.endpoints.delete(token);
      throw new NotFoundError("endpoint", token);
    }
    const { validated } = await this.componentOf(source);
    const customResponse = Boolean(validated.props.find((prop) => prop.baseType === "$.interface.http")?.customResponse);
    const endpoint = { source, customResponse, hasRun: validated.hasRun };
    return generation === this.endpointsGeneration ? this.endpoints.set(token, endpoint) : endpoint;
  }
}

/** The call of a prop's async options method, with the props configured so far and the form's paging and query. */
function optionsCall(prop: string, configured: Record<string, unknown>, args: { page?: number | undefined; prevContext?: unknown; query?: string | undefined }) {
  return { kind: "options" as const, prop, args: { ...configured, page: args.page ?? 0, prevContext: args.prevContext ?? {}, query: args.query ?? "" } };
}

/** What an options call answered, as the API gives it; its failure named. */
function optionsFrom(prop: string, result: { ok: boolean; value?: unknown; error?: { name: string; message: string; code: string } | undefined }) {
  if (!result.ok) throw new SourceFailedError(`The options method of "${prop}" failed: ${errorHeadline(result.error!.name, result.error!.message)}`, { code: result.error!.code });
  return normalizeOptions(result.value);
}

/** Options methods return an array, or `{options, context}` when they page by token. */
function normalizeOptions(value: unknown): { options: unknown[]; context: unknown } {
  if (Array.isArray(value)) return { options: value, context: null };
  if (value && typeof value === "object" && Array.isArray((value as { options?: unknown }).options)) {
    const { options, context } = value as { options: unknown[]; context?: unknown };
    return { options, context: context ?? null };
  }
  throw new SourceFailedError("The options method must return an array, or { options: [...], context }.");
}
