import { validateConfiguredProps } from "../../domain/configured-props.js";
import { checkDelayStep } from "../../domain/delay-action-limit.js";
import { ConflictError, NotFoundError, ValidationError } from "../../domain/errors.js";
import { newId } from "../../domain/ids.js";
import type { PageRequest, PageSlice } from "../../domain/paging.js";
import { slugify, uniqueSlug } from "../../domain/slug.js";
import type { StoredEvent } from "../../domain/sources.js";
import { retryPolicyView } from "../../domain/run-retries.js";
import { gateSettingsView, type WaitingEvent } from "../../domain/run-gate.js";
import { validateWorkflowInput, type StepInput, type WorkflowInput, type WorkflowSettings } from "../../domain/workflow-rules.js";
import type { Workflow, WorkflowRun, WorkflowStep } from "../../domain/workflows.js";
import type { Store } from "../../store/store.js";
import type { AccountAuth } from "../apps/account-auth.js";
import type { ComponentLoader, LoadedComponent } from "../component-loader.js";
import type { EventHub, HubMessage } from "../event-hub.js";
import { storeUnderFreeSlug } from "../free-slug.js";
import { isSealed, type SecretBox } from "../secrets.js";
import { openSecrets, sealStepSecrets } from "../sources/props.js";
import type { SourcesService } from "../sources/service.js";
import { ERROR_MAIL_ACTION } from "./builtin-actions.js";
import { replayErrors, type NotReplayed, type ReplayFilter, type Replayed } from "./error-replay.js";
import type { ReplayChoice } from "./replay-from-step.js";
import type { WorkflowVersion } from "../../domain/workflow-versions.js";
import { enqueueManualRun } from "./manual-run.js";
import { placeTrigger, type ResolvedTrigger } from "./workflow-triggers.js";

export interface WorkflowsServiceOptions {
  store: Store;
  sources: SourcesService;
  loader: ComponentLoader;
  hub: EventHub;
  /** Seals secret step props at rest. */
  secrets: SecretBox;
  /** Checks that app props' accounts are the owner's and of the right app. */
  accountAuth?: AccountAuth;
  /** A published action by key (the user's registry). */
  resolveAction(ownerId: string, key: string): Promise<LoadedComponent>;
  /** Something about a workflow changed here: caches of it go, here and (awaited: before the caller is answered) in the other processes. */
  onChanged(workflowId: string): void | Promise<void>;
  /** Deliveries were queued here (replays): the worker takes them now. */
  onEnqueued(): void;
  /** Events waiting at a gate that a one-at-a-time line's chain holds as followers (RunControl.cancelFollower). */
  followers?: { cancelFollower(ownerId: string, workflowId: string, eventId: string, by: string): Promise<WorkflowRun | null> };
  now?: () => number;
}

/** A request body: the workflow fields, each optional on update (absent: kept). */
export type WorkflowBody = Record<string, unknown>;

/** Built-in actions a step may name by key. */
const BUILTIN_KEYS = new Set([ERROR_MAIL_ACTION]);

/**
 * Workflows as the API and CLI see them: create (steps saved, trigger
 * placed, subscription made), update, delete, read; their runs, errors and
 * emitted events. Every change is checked completely before anything is
 * stored, and what a failed change created is removed again.
 */
export class WorkflowsService {
  private readonly now: () => number;

  constructor(private readonly options: WorkflowsServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(ownerId: string, body: WorkflowBody): Promise<Workflow> {
    const input = validateWorkflowInput(body);
    const active = readActive(body);
    const steps = await this.saveSteps(ownerId, input.steps, []);
    const trigger = await placeTrigger(this.options.sources, ownerId, input.trigger, { workflowName: input.name, respondsItself: input.respond === "workflow", ownedSourceId: null });
    const at = this.now();
    let workflow: Workflow = {
      id: newId("workflow", at),
      ownerId,
      ...fromInput(input, trigger, steps),
      nameSlug: await this.freeSlug(ownerId, input.name, null),
      active,
      isErrorWorkflow: false,
      deploymentId: newId("deployment", at),
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
    try {
      await this.checkCanRespond(ownerId, input, trigger);
      workflow = await storeUnderFreeSlug(workflow, (row) => this.options.store.createWorkflow(row), () => this.freeSlug(ownerId, input.name, null));
      await this.subscribeTrigger(workflow, null);
      if (!active && trigger.owned && trigger.sourceId) await this.options.sources.update(ownerId, trigger.sourceId, { active: false });
    } catch (error) {
      await this.undo(ownerId, trigger, workflow.id);
      throw error;
    }
    await this.ensureErrorWorkflow(ownerId);
    return workflow;
  }

  async update(ownerId: string, idOrSlug: string, body: WorkflowBody): Promise<Workflow> {
    const current = await this.get(ownerId, idOrSlug);
    const merged = await this.mergedInput(current, body);
    const input = validateWorkflowInput(merged);
    // A kept timer is checked as its source (mergedInput), which may respond; a timer never gets an HTTP request to answer.
    if (body.trigger === undefined && current.triggerKind === "timer" && input.respond === "workflow") {
      throw new ValidationError("respond", 'respond "workflow" needs a trigger that receives HTTP requests; this workflow\'s trigger is a timer.');
    }
    const steps = await this.saveSteps(ownerId, input.steps, current.steps);
    const keepTrigger = body.trigger === undefined && (input.respond === current.respond || current.triggerKind !== "http");
    const trigger: ResolvedTrigger = keepTrigger
      ? { kind: current.triggerKind, sourceId: current.triggerSourceId, owned: current.triggerOwned, created: null }
      : await this.replaceTrigger(current, input);
    const at = this.now();
    const updated: Workflow = {
      ...current,
      ...fromInput(input, trigger, steps),
      nameSlug: input.name === current.name ? current.nameSlug : await this.freeSlug(ownerId, input.name, current.nameSlug),
      active: body.active === undefined ? current.active : readActive(body),
      deploymentId: newId("deployment", at),
      updatedAt: at,
      // Every save is a new version (the store keeps it: see workflow-versions.ts).
      version: (current.version ?? 1) + 1,
    };
    try {
      await this.checkCanRespond(ownerId, input, trigger);
      await this.options.store.updateWorkflow(updated);
      await this.subscribeTrigger(updated, current);
    } catch (error) {
      await this.undo(ownerId, trigger, null);
      throw error;
    }
    if (current.triggerOwned && current.triggerSourceId && current.triggerSourceId !== updated.triggerSourceId) {
      await this.options.sources.remove(ownerId, current.triggerSourceId).catch(() => undefined);
    }
    if (updated.triggerOwned && updated.triggerSourceId) {
      const follows: { name?: string; active?: boolean } = {};
      // Its own trigger is named after it ("<name> trigger"), so that source listings say whose it is.
      if (updated.name !== current.name && updated.triggerSourceId === current.triggerSourceId) follows.name = `${updated.name} trigger`;
      // A paused workflow's own trigger pauses too: its endpoint answers 404 and its timer stops, rather than taking events nobody runs.
      if (updated.active !== current.active) follows.active = updated.active;
      // One update (its hooks run once) for both.
      if (follows.name !== undefined || follows.active !== undefined) await this.options.sources.update(ownerId, updated.triggerSourceId, follows);
    }
    await this.options.onChanged(updated.id);
    return updated;
  }

  async remove(ownerId: string, idOrSlug: string): Promise<void> {
    const workflow = await this.get(ownerId, idOrSlug);
    if (workflow.isErrorWorkflow) {
      throw new ConflictError("The global error workflow cannot be deleted: every error would go unnoticed. Change its steps instead (PUT), or turn error_notifications off in a workflow's settings.");
    }
    if (workflow.triggerOwned && workflow.triggerSourceId) {
      await this.options.sources.remove(ownerId, workflow.triggerSourceId).catch((error) => {
        if (!(error instanceof NotFoundError)) throw error;
      });
    }
    await this.options.store.deleteWorkflow(ownerId, workflow.id);
    this.options.hub.publish(workflow.id, { kind: "closed", reason: "The workflow was deleted." });
    await this.options.onChanged(workflow.id);
  }

  async get(ownerId: string, idOrSlug: string): Promise<Workflow> {
    const workflow = await this.options.store.findWorkflow(ownerId, idOrSlug);
    if (!workflow) throw new NotFoundError("workflow", idOrSlug);
    return workflow;
  }

  list(ownerId: string, page: PageRequest): Promise<PageSlice<Workflow>> {
    return this.options.store.listWorkflows(ownerId, page);
  }

  async runs(ownerId: string, idOrSlug: string, page: PageRequest): Promise<PageSlice<WorkflowRun>> {
    const workflow = await this.get(ownerId, idOrSlug);
    return this.options.store.listRuns(ownerId, workflow.id, page);
  }

  async run(ownerId: string, runId: string): Promise<WorkflowRun> {
    const run = await this.options.store.findRun(ownerId, runId);
    if (!run) throw new NotFoundError("run", runId);
    return run;
  }

  /**
   * Cancels an event waiting at the workflow's gate (settings.concurrency:
   * not yet admitted): it leaves its line for good and its run is recorded
   * `cancelled`. The run, or null when the event is not waiting (admitted
   * already, run, or unknown): the caller says so (a running run is
   * cancelled another way).
   */
  /** The events waiting at the workflow's gate, in line order, one page (see Store.listWaiting). */
  async waiting(ownerId: string, idOrSlug: string, page: PageRequest): Promise<PageSlice<WaitingEvent>> {
    const workflow = await this.get(ownerId, idOrSlug);
    return this.options.store.listWaiting(ownerId, workflow.id, page);
  }

  async cancelWaiting(ownerId: string, idOrSlug: string, eventId: string, by = ownerId): Promise<WorkflowRun | null> {
    const workflow = await this.get(ownerId, idOrSlug);
    // Waiting in the store; or taken as a follower by a one-at-a-time line's chain, here or in another process, and
    // not started: that chain records it cancelled.
    const waiting = await this.options.store.cancelWaiting(ownerId, workflow.id, eventId, this.now());
    return waiting ?? (await this.options.followers?.cancelFollower(ownerId, workflow.id, eventId, by)) ?? null;
  }

  /**
   * Runs the workflow again on the original events of its errors, from the
   * trigger or their failed steps (see error-replay.ts); a paused workflow
   * would drop them, so it refuses. `single`: one error asked for by id,
   * which answers 409 when it cannot be replayed as asked.
   */
  async replay(ownerId: string, idOrSlug: string, filter: ReplayFilter, choice: ReplayChoice = { from: "trigger", withCode: "current" }, single = false): Promise<{ replayed: Replayed[]; notReplayed: NotReplayed[] }> {
    const workflow = await this.get(ownerId, idOrSlug);
    if (!workflow.active) throw new ConflictError(`The workflow ${workflow.id} is paused; activate it (PUT {"active": true}) and replay again.`);
    const result = await replayErrors(this.options.store, workflow, filter, choice, this.now(), single);
    this.options.onEnqueued();
    return result;
  }

  /** The workflow's kept versions, newest first (see workflow-versions.ts). */
  async versions(ownerId: string, idOrSlug: string, options: { limit: number; before?: number | undefined }): Promise<{ workflow: Workflow; versions: WorkflowVersion[] }> {
    const workflow = await this.get(ownerId, idOrSlug);
    return { workflow, versions: await this.options.store.listWorkflowVersions(ownerId, workflow.id, options) };
  }

  /**
   * Runs the workflow once on `event` (run now, or a test run with a sample
   * event), whatever its trigger; a paused workflow would drop the run, so it
   * refuses. Returns the id the run will have.
   */
  async runOnce(ownerId: string, idOrSlug: string, event: unknown): Promise<{ runId: string; eventId: string }> {
    const workflow = await this.get(ownerId, idOrSlug);
    if (!workflow.active) throw new ConflictError(`The workflow ${workflow.id} is paused; activate it (PUT {"active": true}) and run it again.`);
    const queued = await enqueueManualRun(this.options.store, workflow, event, this.now());
    this.options.onEnqueued();
    return queued;
  }

  /** The run of this id once it is recorded, or null when it is not (yet). */
  findRun(ownerId: string, runId: string): Promise<WorkflowRun | null> {
    return this.options.store.findRun(ownerId, runId);
  }

  /** A channel of the workflow: `$errors`, or "" for what `$.send.emit` sent. */
  async events(ownerId: string, idOrSlug: string, channel: string, page: PageRequest): Promise<PageSlice<StoredEvent>> {
    const workflow = await this.get(ownerId, idOrSlug);
    return this.options.store.listEvents(ownerId, workflow.id, { channel, page });
  }

  /** Follows a workflow's live events (emits, errors, `$.send.sse`); call `stop` to end. */
  async follow(ownerId: string, idOrSlug: string, listener: (message: HubMessage) => void): Promise<{ workflow: Workflow; stop: () => void }> {
    const workflow = await this.get(ownerId, idOrSlug);
    return { workflow, stop: await this.options.hub.follow(workflow.id, listener, (eventId) => this.options.store.findEvent(ownerId, workflow.id, eventId)) };
  }

  /** The owner's global error workflow, created on first use: a listener of `p_*` / `$errors` that mails a summary. */
  async ensureErrorWorkflow(ownerId: string): Promise<Workflow> {
    const existing = await this.options.store.findErrorWorkflow(ownerId);
    if (existing) return existing;
    const at = this.now();
    const workflow: Workflow = {
      id: newId("workflow", at),
      ownerId,
      name: "Global error workflow",
      nameSlug: await this.freeSlug(ownerId, "Global error workflow", null),
      active: true,
      triggerSourceId: null,
      triggerOwned: false,
      triggerKind: "none",
      steps: [{ id: newId("cell", at), name: "notify", componentId: null, key: ERROR_MAIL_ACTION, props: {} }],
      respond: "immediately",
      // Its own errors are listed but never routed (to itself or anywhere).
      settings: { errorNotifications: false, errorRetention: 100 },
      isErrorWorkflow: true,
      deploymentId: newId("deployment", at),
      createdAt: at,
      updatedAt: at,
    };
    try {
      await this.options.store.createWorkflow(workflow);
    } catch (error) {
      // Another first use took the slug a moment ago: that one stands.
      const raced = error instanceof ConflictError ? await this.options.store.findErrorWorkflow(ownerId) : null;
      if (raced) return raced;
      throw error;
    }
    await this.options.store.subscribe({ id: newId("subscription", at), ownerId, emitterId: "p_*", listenerId: workflow.id, eventName: "$errors", createdAt: at });
    // Two first uses at once: one error workflow stands (the oldest), the other goes.
    const winner = await this.options.store.findErrorWorkflow(ownerId);
    if (winner && winner.id !== workflow.id) {
      await this.options.store.deleteWorkflow(ownerId, workflow.id);
      return winner;
    }
    return workflow;
  }

  /**
   * Secret step props stored in the clear (saved before steps' secrets were
   * sealed) are sealed now: run at every start, it finds nothing to do once
   * done. Returns how many values it sealed.
   */
  async sealStoredStepSecrets(): Promise<number> {
    const { store, loader, secrets } = this.options;
    let sealed = 0;
    // Steps of many workflows share code: each saved component is read once per pass.
    const components = new Map<string, Awaited<ReturnType<Store["findComponent"]>>>();
    const componentOf = async (ownerId: string, componentId: string) => {
      const key = `${ownerId} ${componentId}`;
      if (!components.has(key)) components.set(key, await store.findComponent(ownerId, componentId));
      return components.get(key) ?? null;
    };
    for (const { id, ownerId, steps } of await store.listAllWorkflowSteps()) {
      let changed = false;
      const next: WorkflowStep[] = [];
      for (const step of steps) {
        const clear = step.componentId !== null && Object.values(step.props).some((value) => typeof value === "string" && !isSealed(value));
        const component = clear ? await componentOf(ownerId, step.componentId!) : null;
        if (!component) {
          next.push(step);
          continue;
        }
        const props = sealStepSecrets(loader.validatedOf(component), step.props, step.props, secrets);
        const count = Object.keys(props).filter((name) => props[name] !== step.props[name]).length;
        if (count > 0) {
          changed = true;
          sealed += count;
        }
        next.push({ ...step, props });
      }
      const workflow = changed ? await store.findWorkflow(ownerId, id) : null;
      if (workflow) {
        await store.updateWorkflow({ ...workflow, steps: next });
        await this.options.onChanged(id);
      }
    }
    return sealed;
  }

  /** Saves each step's code (or resolves its key) before anything is stored; step ids stay with their names. */
  private async saveSteps(ownerId: string, inputs: StepInput[], current: WorkflowStep[]): Promise<WorkflowStep[]> {
    const idsByName = new Map(current.map((step) => [step.name, step.id]));
    const storedByName = new Map(current.map((step) => [step.name, step.props]));
    // Secrets sealed (kept ones included), then every value checked against its prop, as a source's are on deploy.
    const sealed = async (loaded: LoadedComponent, input: StepInput, index: number) => {
      const props = sealStepSecrets(loaded.validated, input.props, storedByName.get(input.name) ?? {}, this.options.secrets);
      const values = validateConfiguredProps(loaded.validated, openSecrets(props, this.options.secrets), { field: `steps[${index}].props`, step: input.name });
      checkDelayStep(loaded.validated.key, values, { field: `steps[${index}].props`, step: input.name });
      await this.options.accountAuth?.checkConfigured(ownerId, loaded.validated, props, `steps[${index}].props`);
      return props;
    };
    const at = this.now();
    const steps: WorkflowStep[] = [];
    for (const [index, input] of inputs.entries()) {
      const id = idsByName.get(input.name) ?? newId("cell", at);
      const retries = input.retries ? { retries: input.retries } : {};
      if ("key" in input) {
        if (BUILTIN_KEYS.has(input.key)) {
          steps.push({ id, name: input.name, componentId: null, key: input.key, props: input.props, ...retries });
          continue;
        }
        const action = await this.resolveKey(ownerId, input.key, index);
        steps.push({ id, name: input.name, componentId: action.component.id, key: input.key, props: await sealed(action, input, index), ...retries });
        continue;
      }
      const loaded = await this.options.loader.save(ownerId, { component_code: input.code, filename: input.filename }, { asStep: true, field: `steps[${index}].code` });
      steps.push({ id, name: input.name, componentId: loaded.component.id, key: null, props: await sealed(loaded, input, index), ...retries });
    }
    return steps;
  }

  private async resolveKey(ownerId: string, key: string, index: number): Promise<LoadedComponent> {
    let action: LoadedComponent;
    try {
      action = await this.options.resolveAction(ownerId, key);
    } catch (error) {
      if (error instanceof NotFoundError) throw new ValidationError(`steps[${index}].key`, `There is no published action "${key}". Publish it first: runnel publish <file>.`);
      // The registry's refusal of an app key, named at this step.
      if (error instanceof ValidationError && error.field === "key") throw new ValidationError(`steps[${index}].key`, error.message);
      throw error;
    }
    if (action.validated.kind !== "action") throw new ValidationError(`steps[${index}].key`, `"${key}" is a source, not an action; a step needs an action.`);
    return action;
  }

  private async replaceTrigger(current: Workflow, input: WorkflowInput): Promise<ResolvedTrigger> {
    // An inline trigger replaced by another inline one is updated in place (same id, same endpoint).
    const inline = input.trigger.kind === "http" || input.trigger.kind === "timer" || input.trigger.kind === "component";
    const ownedSourceId = inline && current.triggerOwned ? current.triggerSourceId : null;
    return placeTrigger(this.options.sources, current.ownerId, input.trigger, { workflowName: input.name, respondsItself: input.respond === "workflow", ownedSourceId });
  }

  /**
   * `respond: "workflow"` needs a trigger whose endpoint leaves the answer to
   * the workflow (an HTTP interface with customResponse); otherwise callers
   * would get 200 at once and `$.respond` would be silently lost.
   */
  private async checkCanRespond(ownerId: string, input: WorkflowInput, trigger: ResolvedTrigger): Promise<void> {
    if (input.respond !== "workflow" || trigger.kind === "http" || !trigger.sourceId) return;
    const source = await this.options.sources.get(ownerId, trigger.sourceId);
    const { validated } = await this.options.sources.componentOf(source);
    const http = validated.props.find((prop) => prop.baseType === "$.interface.http");
    if (!http?.customResponse) {
      throw new ValidationError(
        "respond",
        'respond "workflow" needs a trigger that leaves the HTTP answer to the workflow: {"type": "http"}, or a source whose $.interface.http prop has customResponse: true.',
      );
    }
  }

  /** The trigger is a subscription to the source's default channel; the old one goes when the source changes. */
  private async subscribeTrigger(workflow: Workflow, previous: Workflow | null): Promise<void> {
    const { store } = this.options;
    if (previous?.triggerSourceId && previous.triggerSourceId !== workflow.triggerSourceId) {
      await store.unsubscribe(workflow.ownerId, { emitterId: previous.triggerSourceId, listenerId: workflow.id, eventName: "" });
    }
    if (workflow.triggerSourceId) {
      await store.subscribe({ id: newId("subscription", this.now()), ownerId: workflow.ownerId, emitterId: workflow.triggerSourceId, listenerId: workflow.id, eventName: "", createdAt: this.now() });
    }
  }

  /** Removes what a failed change created. */
  private async undo(ownerId: string, trigger: ResolvedTrigger, workflowId: string | null): Promise<void> {
    if (trigger.created) await this.options.sources.remove(ownerId, trigger.created.id).catch(() => undefined);
    if (workflowId) await this.options.store.deleteWorkflow(ownerId, workflowId).catch(() => undefined);
  }

  /** An update's body over the current workflow: what it leaves out stays. */
  private async mergedInput(current: Workflow, body: WorkflowBody): Promise<Record<string, unknown>> {
    const steps = body.steps ?? (await this.currentSteps(current));
    const settings = { ...settingsBody(current.settings), ...(isRecord(body.settings) ? body.settings : {}) };
    // The trigger is checked only when given; otherwise the current one stays (see update).
    const trigger = body.trigger ?? (current.triggerKind === "none" ? undefined : current.triggerKind === "http" ? { type: "http" } : { source_id: current.triggerSourceId });
    return { name: body.name ?? current.name, trigger, steps, respond: body.respond ?? current.respond, settings };
  }

  private async currentSteps(current: Workflow): Promise<StepInput[]> {
    const steps: StepInput[] = [];
    for (const step of current.steps) {
      // Kept as given (snake_case): the rules check them again with the rest.
      const retries = step.retries ? { retries: retryPolicyView(step.retries) } : {};
      if (step.componentId === null || step.key !== null) {
        steps.push({ name: step.name, key: step.key ?? "", props: step.props, ...retries } as StepInput);
        continue;
      }
      const component = await this.options.store.findComponent(current.ownerId, step.componentId);
      if (!component) throw new ValidationError("steps", `The code of step "${step.name}" is missing; give the steps again.`);
      steps.push({ name: step.name, code: component.code, props: step.props, ...retries } as StepInput);
    }
    return steps;
  }

  private async freeSlug(ownerId: string, name: string, ownSlug: string | null): Promise<string> {
    const base = slugify(name);
    const taken = await this.options.store.takenWorkflowSlugs(ownerId, base);
    if (ownSlug) taken.delete(ownSlug);
    return uniqueSlug(base, taken);
  }
}

/** What a created or updated workflow takes from its checked input, its trigger and its saved steps. */
function fromInput(input: WorkflowInput, trigger: ResolvedTrigger, steps: WorkflowStep[]): Pick<Workflow, "name" | "triggerSourceId" | "triggerOwned" | "triggerKind" | "steps" | "respond" | "settings"> {
  return { name: input.name, triggerSourceId: trigger.sourceId, triggerOwned: trigger.owned, triggerKind: trigger.kind, steps, respond: input.respond, settings: input.settings };
}

/** A workflow's settings as the API takes them: what an update that leaves some out keeps. */
function settingsBody(settings: WorkflowSettings): Record<string, unknown> {
  return {
    error_notifications: settings.errorNotifications,
    error_retention: settings.errorRetention,
    ...(settings.retries ? { retries: retryPolicyView(settings.retries) } : {}),
    ...(settings.errorsOnEachAttempt ? { errors_on_each_attempt: true } : {}),
    ...gateSettingsView(settings),
  };
}

function readActive(body: WorkflowBody): boolean {
  if (body.active === undefined) return true;
  if (typeof body.active !== "boolean") throw new ValidationError("active", "active must be true or false.");
  return body.active;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
