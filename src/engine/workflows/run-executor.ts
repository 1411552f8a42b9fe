import type { Logger } from "pino";
import { envNamesIn, evaluateStepProps } from "../../domain/expressions.js";
import { stepPropChecks } from "../../domain/step-prop-checks.js";
import { sendRecord } from "../../domain/send-records.js";
import { sendIdempotencyKey, type NewOutboxSend, type OutboxSendType } from "../../domain/durable-sends.js";
import type { SavedComponent } from "../../domain/sources.js";
import { runErrorCodeOf, type RunErrorCode, type Workflow, type WorkflowRun, type WorkflowStep } from "../../domain/workflows.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { ChainStep } from "../../sandbox/protocol.js";
import type { ComponentBundle, InvokeRequest, InvokeResult, Sandbox } from "../../sandbox/sandbox.js";
import type { ClaimedDelivery, EventBatch, Store } from "../../store/store.js";
import type { LineChain } from "../../store/run-gate-work.js";
import { newId } from "../../domain/ids.js";
import { cancelledWaitingRun } from "../../domain/run-gate.js";
import type { BundleFiles } from "../bundle-files.js";
import type { ComponentLoader } from "../component-loader.js";
import type { EventHub } from "../event-hub.js";
import type { DataStoresService } from "../data-stores/data-stores-service.js";
import type { LateFaults } from "../late-faults.js";
import type { SecretBox } from "../secrets.js";
import { dataStoreNames, openSecrets } from "../sources/props.js";
import { DB_MAX_BYTES } from "../../sandbox/runner/db-store.js";
import type { StepStoreChanges } from "../../domain/data-stores.js";
import type { DbSnapshot } from "../../sandbox/protocol.js";
import type { RunLimits } from "../sources/invoker.js";
import type { DeliveryHandOff } from "../sources/result-writer.js";
import type { BuiltinActions } from "./builtin-actions.js";
import { emitAppend, errorAppend, failRun, logsAppend, finishedRun, fromSandboxError, recordStep, resumeRun, skipRest, startRun, type RunState } from "./run-state.js";
import { settleFailedAttempt } from "./step-retries.js";
import { resumeReplay, versionAskedFor } from "./replay-from-step.js";
import type { AccountAuth } from "../apps/account-auth.js";
import type { ValidatedComponent } from "../../domain/component-rules.js";
import { workflowBundle } from "./workflow-bundle.js";
import type { WorkflowResponses } from "./workflow-responses.js";
import { NO_METRICS, type Metrics, type RunTriggerKind } from "../metrics.js";
import { MANUAL_RUN_CHANNEL } from "./manual-run.js";
import { flowUrls, isWaitingStatus } from "../../domain/run-flow.js";
import { applyFlowRequest, contextRunOf } from "./run-flow.js";
import { settleCancelledWait, stopIfCancelled } from "./run-cancel.js";
import { ChurningMap } from "../../domain/churning-map.js";

export interface RunExecutorOptions {
  store: Store;
  sandbox: Sandbox;
  loader: ComponentLoader;
  bundleFiles: BundleFiles;
  hub: EventHub;
  responses: WorkflowResponses;
  builtins: BuiltinActions;
  /** The runs just recorded put sends in the send outbox (its worker may look now). */
  onSendsEnqueued?: () => void;
  logger: Logger;
  limits: RunLimits;
  /** Opens sealed secret step props, just before the steps run. */
  secrets: SecretBox;
  /** The owner's environment variables of these names (those that exist), for `{{process.env.NAME}}` in step props. */
  envVars: { resolve(ownerId: string, names: readonly string[]): Promise<Record<string, string>> };
  /** Told which workflow runs which bundle, so that a fault after a run reaches the workflow's logs. */
  lateFaults?: LateFaults;
  /** A delivery whose runs were cut off this many times by their process dying is not run again (RUNNEL_MAX_RUN_INTERRUPTIONS). Default 3. */
  maxInterruptions?: number;
  /** Carries out steps' `data_store` calls; without it they fail. */
  dataStores?: DataStoresService;
  /**
   * Whether recording runs removes their deliveries in the same transaction
   * (the local queue: a delivery is a store row). False with BullMQ: the
   * delivery worker completes the jobs after the commit. Default true.
   */
  deliveriesInStore?: boolean;
  /** This process's instance id: the lease of a delivery recorded while its run goes on (see secureHeldAnswer). */
  claimer?: string | undefined;
  /** Gives steps' app props their account's `$auth`, read for each batch of runs; without it they get an empty one. */
  accountAuth?: AccountAuth;
  /**
   * Where deliveries admitted by a gated workflow's ended runs go at once
   * (recorded claimed for it): the worker here, or the shared queue's
   * hand-off. Without it they are recorded pending, for a claimer.
   */
  handOff?: DeliveryHandOff;
  /** Admitted deliveries were recorded pending (due later, or no hand-off): wake whoever claims them. */
  onAdmittedPending?: () => void;
  /** Counts the runs recorded and the events they emitted; none by default. */
  metrics?: Metrics;
  /** The server's public address, for the resume and cancel URLs `$.flow.delay` / `$.flow.rerun` return. */
  baseUrl?: () => string;
  now?: () => number;
}

/**
 * A workflow ready to run: for each step, how the runner calls it (its place
 * in the bundle, its props with declared defaults), or null for a built-in
 * step; and the one bundle of its sandboxed steps.
 */
interface PreparedWorkflow {
  chainSteps: Array<ChainStep | null>;
  /** For each step, the environment variables its props read: only these are resolved, and sent only with the call that runs it. */
  envNames: string[][];
  bundle: ComponentBundle | null;
  /** Steps with a `$.service.db` prop: their stores are read before the runs. */
  dbStepIds: string[];
  /** The data stores the steps' `data_store` props name: the only ones the runs may reach. */
  dataStores: string[];
  /** For each step with app props, its component (whose app props get their accounts' `$auth` before each batch); null for the others. */
  appSteps: Array<ValidatedComponent | null>;
}

/** What a batch did: the deliveries its appends made, and the deliveries of runs waiting to retry a step, with when each is due. */
export interface BatchOutcome {
  made: number;
  retries: Array<{ delivery: ClaimedDelivery; at: number }>;
  /**
   * Deliveries claimed again whose run had ended and was recorded already
   * (its worker died before it settled them, or a job of several was taken
   * over after some of its runs were recorded): not run again, only settled.
   */
  recordedBefore: ClaimedDelivery[];
}

const MAX_LOG_ENTRIES_PER_STEP = 200;
/** Interruptions after which a delivery is recorded as a RepeatedCrash instead of run again (RUNNEL_MAX_RUN_INTERRUPTIONS's default). */
export const DEFAULT_MAX_RUN_INTERRUPTIONS = 3;
/**
 * How long the answer of a run whose steps have ended waits for its batch's
 * record before its delivery is recorded so that it can be given alone (a
 * batch's slowest run holds the others' record back).
 */
const ENDED_RUN_ANSWER_WAIT_MS = 50;
/** Runs sent to one runner at once (see runSegment). */
const STEP_CALLS_PER_RUNNER = 16;

/**
 * Runs a batch of deliveries of one workflow. Each run's sandboxed steps go to
 * the runner as one call (the runner evaluates props and runs the steps in
 * turn), built-in steps run here between such calls. Then one transaction
 * records the runs, removes their deliveries, appends what they emitted
 * (`$errors`, `$.send.emit`) and puts their other sends in the send outbox
 * (carried out after, by SendOutboxWorker).
 */
export class RunExecutor {
  private readonly prepared = new Map<string, Promise<PreparedWorkflow>>();
  /** The runs of this process's batches, from their claim to their record, by id: a cancel finds them here. */
  private readonly inProgress = new ChurningMap<string, { ownerId: string; run: RunState }>();
  /**
   * The followers this process's records handed over (ClaimedDelivery.followers), by workflow and event, from that
   * record until their chain's record (or their head goes back unrun: forgetFollowers): a cancel of a waiting event
   * finds them here, queued (then recorded cancelled by the chain, unrun) or started (then it is a running run).
   */
  private readonly followers = new Map<string, { ownerId: string; delivery: ClaimedDelivery; runId: string; started: boolean; cancel?: { by: string; at: number } }>();
  private readonly now: () => number;
  private readonly metrics: Metrics;

  constructor(private readonly options: RunExecutorOptions) {
    this.now = options.now ?? Date.now;
    this.metrics = options.metrics ?? NO_METRICS;
  }

  /**
   * Runs and records the batch; resolves with how many deliveries its appends
   * made (runs of other listeners now waiting), and the deliveries of runs
   * that wait to retry a step: the caller puts them back in the queue, due
   * at their time (they are recorded `retrying`, not removed).
   */
  async runBatch(workflow: Workflow, deliveries: ClaimedDelivery[], triggerKind: "http" | "timer" | "other"): Promise<BatchOutcome> {
    const { current, others } = await this.byVersion(workflow, deliveries);
    const outcome: BatchOutcome = current.length > 0 ? await this.runVersionBatch(workflow, current, triggerKind) : { made: 0, retries: [], recordedBefore: [] };
    for (const [version, group] of others) {
      const other = await this.runVersionBatch(version, group, triggerKind, false);
      outcome.made += other.made;
      outcome.retries.push(...other.retries);
      outcome.recordedBefore.push(...other.recordedBefore);
    }
    return outcome;
  }

  /**
   * Replays asked to run an earlier version of the workflow's code (see
   * replay-from-step.ts) run as that version, apart from the rest; one whose
   * version is no longer kept stays with the current one and fails saying so.
   */
  private async byVersion(workflow: Workflow, deliveries: ClaimedDelivery[]): Promise<{ current: ClaimedDelivery[]; others: Array<[Workflow, ClaimedDelivery[]]> }> {
    const asked = new Map<number, ClaimedDelivery[]>();
    const current: ClaimedDelivery[] = [];
    for (const delivery of deliveries) {
      const version = versionAskedFor(workflow, delivery);
      if (version === null) current.push(delivery);
      else asked.set(version, [...(asked.get(version) ?? []), delivery]);
    }
    const others: Array<[Workflow, ClaimedDelivery[]]> = [];
    for (const [version, group] of asked) {
      const saved = await this.options.store.findWorkflowVersion(workflow.ownerId, workflow.id, version);
      if (saved) others.push([Object.assign({}, workflow, { steps: saved.steps, deploymentId: saved.deploymentId, version: saved.version }), group]);
      else current.push(...group);
    }
    return { current, others };
  }

  /** `current`: the workflow's current code (a replay may ask for an earlier version's; followers run only on the current one). */
  private async runVersionBatch(workflow: Workflow, deliveries: ClaimedDelivery[], triggerKind: "http" | "timer" | "other", current = true): Promise<BatchOutcome> {
    const runs = deliveries.map((delivery) => startRun(workflow, delivery, triggerKind, this.now()));
    // Ids of one millisecond sort by their random part: hand them out in delivery order, so runs list in event order.
    // Not a manual run's: its caller was given that id when it was queued, and waits on it.
    const fresh = runs.filter((run) => run.delivery.channel !== MANUAL_RUN_CHANNEL);
    const ids = fresh.map((run) => run.id).sort();
    fresh.forEach((run, index) => (run.id = ids[index]!));
    // A replay from a failed step starts there; a retry of it (below) reads its own record instead.
    for (const run of runs) resumeReplay(run, workflow, this.now());
    const recordedBefore = await this.resumeFromRecords(workflow, runs);
    const toRun = recordedBefore.size === 0 ? runs : runs.filter((run) => !recordedBefore.has(run));
    const settledOnly = [...recordedBefore].map((run) => run.delivery);
    if (toRun.length === 0) return { made: 0, retries: [], recordedBefore: settledOnly };
    for (const run of toRun) this.inProgress.set(run.id, { ownerId: workflow.ownerId, run });
    try {
      // Onto the fresh outcome, not a leading spread: once a batch of runs (see domain/own-copy.ts).
      return Object.assign(await this.runAndRecord(workflow, toRun, triggerKind, current), { recordedBefore: settledOnly });
    } finally {
      for (const run of toRun) this.inProgress.delete(run.id);
      this.forgetFollowers(toRun.map((run) => run.delivery));
    }
  }

  /**
   * A person cancelled a run this process is running: it stops before its
   * next step (the step in progress ends first) and is recorded `cancelled`.
   * False when no run of that id is in progress here.
   */
  cancelInProgress(ownerId: string, runId: string, by: string): boolean {
    const run = this.inProgress.get(runId)?.run;
    if (!run || this.inProgress.get(runId)!.ownerId !== ownerId || run.recording || run.status === "cancelled") return false;
    run.cancel ??= { by, at: this.now() };
    run.stopHandle?.stop?.();
    return true;
  }

  private async runAndRecord(workflow: Workflow, runs: RunState[], triggerKind: "http" | "timer" | "other", current: boolean): Promise<Omit<BatchOutcome, "recordedBefore">> {
    this.abandonRepeatedCrashes(workflow, runs);
    let prepared: PreparedWorkflow | Error;
    try {
      prepared = await this.prepare(workflow);
    } catch (error) {
      prepared = error as Error;
    }
    // Every run of the batch starts from the steps' stores as they are now; each writes back the keys it set.
    const stepStores = prepared instanceof Error || prepared.dbStepIds.length === 0 ? {} : await this.options.store.readStepStores(workflow.ownerId, workflow.id, prepared.dbStepIds);
    // As for sources: runs started by an HTTP request are answered sooner than timer runs.
    const timeoutMs = triggerKind === "http" ? this.options.limits.httpTimeoutMs : this.options.limits.runTimeoutMs;
    // Runs resumed at a failed step start there (rare: most batches are one group, from the first step).
    const byStart = new Map<number, RunState[]>();
    for (const run of runs) {
      const group = byStart.get(run.resumeAt);
      if (group) group.push(run);
      else byStart.set(run.resumeAt, [run]);
    }
    await Promise.all([...byStart].map(([from, group]) => this.runSteps(workflow, prepared, from, group, timeoutMs, stepStores)));
    const now = this.now();
    for (const run of runs) settleFailedAttempt(workflow, run, now);
    for (const run of runs) stopIfCancelled(run);
    for (const run of runs) if (run.status !== "running") skipRest(run, workflow.steps);
    const { followed, chains } = await this.runFollowers(workflow, prepared, runs, triggerKind, timeoutMs, stepStores, current);
    try {
      const all = followed.length > 0 ? [...runs, ...followed] : runs;
      const made = await this.commit(workflow, all, triggerKind, chains);
      // A follower that waits to retry (or is delayed) is put back as its head would be: its delivery was recorded for it.
      const retries = all.flatMap((run) => (isWaitingStatus(run.status) ? [{ delivery: run.delivery, at: run.nextAttemptAt ?? now }] : []));
      return { made, retries };
    } finally {
      for (const run of followed) this.inProgress.delete(run.id);
    }
  }

  /**
   * A one-at-a-time line's followers (ClaimedDelivery.followers, taken by the
   * record that admitted their head): run one after the other once the run
   * before them ended, each from the step stores that run left, and recorded
   * with the batch in one transaction, where each run had a commit of its
   * own. The chain stops at a run that waits (to retry, or delayed: it holds
   * the line's slot) and at a replay asking for other code (admitted on its
   * own later); the followers not run wait again (LineChain). One cancelled
   * while queued (cancelQueuedFollower) is recorded cancelled, unrun.
   */
  private async runFollowers(
    workflow: Workflow,
    prepared: PreparedWorkflow | Error,
    runs: RunState[],
    triggerKind: "http" | "timer" | "other",
    timeoutMs: number,
    stepStores: Record<string, DbSnapshot>,
    current: boolean,
  ): Promise<{ followed: RunState[]; chains: LineChain[] }> {
    const followed: RunState[] = [];
    const chains: LineChain[] = [];
    const chain = async (head: RunState, followers: ClaimedDelivery[]): Promise<void> => {
      let stores = storesAfter(stepStores, head);
      let previous = head;
      head.endedAt = this.now();
      let stopped = false;
      for (const delivery of followers) {
        const queued = this.followers.get(followerKey(workflow.id, delivery.eventId));
        // Earlier code, asked for by the head's replay: the followers wait again, for the current code.
        stopped ||= !current || isWaitingStatus(previous.status) || versionAskedFor(workflow, delivery) !== null;
        // Past where the chain stopped, only those cancelled while queued are recorded (cancelled, as their caller was told).
        if (stopped && !queued?.cancel) continue;
        const run = startRun(workflow, delivery, triggerKind, this.now());
        followed.push(run);
        if (queued) queued.started = true;
        if (queued?.cancel) {
          run.id = queued.runId;
          run.cancel = queued.cancel;
          run.endedAt = run.startedAt;
          stopIfCancelled(run);
          continue;
        }
        resumeReplay(run, workflow, this.now());
        run.chained = true;
        previous = run;
        this.inProgress.set(run.id, { ownerId: workflow.ownerId, run });
        await this.runSteps(workflow, prepared, run.resumeAt, [run], timeoutMs, stores);
        run.endedAt = this.now();
        settleFailedAttempt(workflow, run, run.endedAt);
        stopIfCancelled(run);
        if (run.status !== "running") skipRest(run, workflow.steps);
        stores = storesAfter(stores, run);
      }
    };
    const going: Array<Promise<void>> = [];
    for (const head of runs) {
      const { followers, lineKey } = head.delivery;
      if (!followers?.length || lineKey === undefined) continue;
      chains.push({ workflowId: workflow.id, headEventId: head.delivery.eventId, gateKey: lineKey });
      // Lines of different keys go on side by side, as their heads did.
      going.push(chain(head, followers));
    }
    await Promise.all(going);
    return { followed, chains };
  }

  /**
   * A person cancelled an event waiting at the gate that a chain of this
   * process has taken as a follower and not started yet (the store's
   * cancelWaiting finds it `following`): it is recorded cancelled with the
   * chain, never run. Answers its run as it will be recorded, or null when
   * no chain here holds it unstarted (it runs: cancel its run instead).
   */
  cancelQueuedFollower(ownerId: string, workflowId: string, eventId: string, by: string): WorkflowRun | null {
    const queued = this.followers.get(followerKey(workflowId, eventId));
    // Cancelled already, or running: not waiting.
    if (!queued || queued.ownerId !== ownerId || queued.started || queued.cancel) return null;
    const now = this.now();
    queued.cancel = { by, at: now };
    return cancelledWaitingRun({ id: queued.runId, ownerId, workflowId, emitterId: queued.delivery.emitterId, eventId, triggerEvent: queued.delivery.event }, now, by);
  }

  /** Heads handed over by a record here that will not run here (given back, or their workflow paused): their followers are the store's again. */
  forgetFollowers(heads: ClaimedDelivery[]): void {
    for (const head of heads) for (const follower of head.followers ?? []) this.followers.delete(followerKey(head.listenerId, follower.eventId));
  }


  /**
   * Deliveries claimed again (attempts above 1) may be runs waiting to retry
   * a step: those resume at it. Others may be runs that ended and were
   * recorded, their delivery not settled (the worker died between the two,
   * or a job of several was taken over after some of its runs ended): those
   * are returned, not to be run again (a run's steps run once to completion;
   * its record could not be written twice anyway). A first attempt never
   * asks the store.
   */
  private async resumeFromRecords(workflow: Workflow, runs: RunState[]): Promise<Set<RunState>> {
    const recordedBefore = new Set<RunState>();
    const again = runs.filter((run) => run.delivery.attempts > 1);
    if (again.length === 0) return recordedBefore;
    const recorded = await this.options.store.findRunsByKey(
      workflow.ownerId,
      workflow.id,
      again.map((run) => ({ emitterId: run.delivery.emitterId, eventId: run.delivery.eventId })),
    );
    for (const row of recorded) {
      const run = again.find((candidate) => candidate.delivery.emitterId === row.emitterId && candidate.delivery.eventId === row.eventId);
      if (!run) continue;
      // Cancelled while it waited: its delivery is settled without running anything (its row stays as the cancel left it).
      if (row.status === "cancelled") settleCancelledWait(run, row);
      else if (isWaitingStatus(row.status)) resumeRun(run, row, workflow.steps);
      else recordedBefore.add(run);
    }
    return recordedBefore;
  }

  /** The steps of `runs` from step `from` on, each sandboxed stretch as one call per run, built-in steps here. */
  private async runSteps(workflow: Workflow, prepared: PreparedWorkflow | Error, from: number, runs: RunState[], timeoutMs: number, stepStores: Record<string, DbSnapshot>): Promise<void> {
    for (let index = from; index < workflow.steps.length; ) {
      for (const run of runs) stopIfCancelled(run);
      const active = runs.filter((run) => run.status === "running");
      if (active.length === 0) break;
      if (prepared instanceof Error) {
        for (const run of active) failRun(run, workflow.steps[index]!, { code: "InvalidComponent", name: "InvalidComponent", message: prepared.message }, this.now());
        break;
      }
      if (!prepared.chainSteps[index]) {
        await this.runBuiltin(workflow, index, active);
        index += 1;
        continue;
      }
      // The sandboxed steps from here to the next built-in one (or the end) go to the runner as one call per run.
      let end = index + 1;
      while (end < workflow.steps.length && prepared.chainSteps[end]) end += 1;
      await this.runSegment(workflow, prepared, index, end, active, timeoutMs, stepStores);
      index = end;
    }
  }

  /**
   * A delivery whose runs kept taking their process down (the server killed
   * mid-run, again and again) would do it at every start: it becomes an
   * error of its workflow instead, kept in `$errors` for replay, and is not
   * run again.
   */
  private abandonRepeatedCrashes(workflow: Workflow, runs: RunState[]): void {
    const most = this.options.maxInterruptions ?? DEFAULT_MAX_RUN_INTERRUPTIONS;
    const first = workflow.steps[0];
    if (!first) return;
    for (const run of runs) {
      const times = run.delivery.interruptions;
      if (times < most) continue;
      const message = `This run was cut off ${times} times by the process running it dying (the server was killed or crashed while it ran), so it is not run again. Look at what its steps do with the event, then replay it from $errors.`;
      // A run resumed to retry a step was cut off in that step.
      failRun(run, workflow.steps[run.resumeAt] ?? first, { code: "RepeatedCrash", name: "RepeatedCrash", message }, this.now());
      this.options.logger.warn({ workflowId: workflow.id, workflowName: workflow.name, emitterId: run.delivery.emitterId, eventId: run.delivery.eventId, interruptions: times }, "a delivery kept taking its process down; it was recorded as an error of its workflow and is not run again");
    }
  }

  /** Forgets what was prepared for a workflow (it changed or went away). */
  forget(workflowId: string): void {
    for (const key of this.prepared.keys()) if (key.startsWith(`${workflowId} `)) this.prepared.delete(key);
  }

  private prepare(workflow: Workflow): Promise<PreparedWorkflow> {
    const key = `${workflow.id} ${workflow.deploymentId}`;
    let prepared = this.prepared.get(key);
    if (!prepared) {
      this.forget(workflow.id);
      prepared = this.load(workflow);
      prepared.catch(() => this.prepared.delete(key));
      this.prepared.set(key, prepared);
    }
    return prepared;
  }

  private async load(workflow: Workflow): Promise<PreparedWorkflow> {
    const { store, loader } = this.options;
    const sandboxed: SavedComponent[] = [];
    const chainSteps: PreparedWorkflow["chainSteps"] = [];
    const dbStepIds: string[] = [];
    const dataStores = new Set<string>();
    const envNames: string[][] = [];
    const appSteps: Array<ValidatedComponent | null> = [];
    for (const [index, step] of workflow.steps.entries()) {
      if (step.componentId === null) {
        chainSteps.push(null);
        appSteps.push(null);
        envNames.push(envNamesIn(step.props));
        continue;
      }
      const saved = await store.findComponent(workflow.ownerId, step.componentId);
      if (!saved) throw new Error(`The code of step "${step.name}" (${step.componentId}) is missing; update the workflow to save it again.`);
      const props: Record<string, unknown> = {};
      const validated = loader.validatedOf(saved);
      for (const prop of validated.props) if (prop.default !== undefined) props[prop.name] = prop.default;
      const dbProps = validated.props.filter((prop) => prop.baseType === "$.service.db").map((prop) => prop.name);
      if (dbProps.length > 0) dbStepIds.push(step.id);
      // Sealed secrets are opened here, into the prepared (in-memory) workflow only.
      const opened = openSecrets({ ...props, ...step.props }, this.options.secrets);
      for (const name of dataStoreNames(validated, opened)) dataStores.add(name);
      chainSteps.push({ index: sandboxed.length, id: step.id, name: step.name, props: opened, field: `steps[${index}]`, checks: stepPropChecks(validated, opened), ...(dbProps.length > 0 ? { dbProps } : {}) });
      envNames.push(envNamesIn(opened));
      appSteps.push(validated.props.some((prop) => prop.baseType === "app") ? validated : null);
      sandboxed.push(saved);
    }
    const bundle = sandboxed.length > 0 ? await workflowBundle(this.options.bundleFiles, workflow.ownerId, sandboxed) : null;
    return { chainSteps, bundle, dbStepIds, dataStores: [...dataStores], envNames, appSteps };
  }

  /**
   * Steps `from` to `to` (all sandboxed) of every run: one `steps` call per
   * run, in which the runner evaluates each step's props, runs it and reports
   * it; they share the run's time limit. A runner runs its calls side by side
   * (runs are independent), so runs whose steps wait on an API wait together;
   * a big batch is spread over a few runners, for the machine's cores.
   */
  private async runSegment(workflow: Workflow, prepared: PreparedWorkflow, from: number, to: number, runs: RunState[], timeoutMs: number, stores: Record<string, DbSnapshot>): Promise<void> {
    const startedAt = this.now();
    const withStores = (prepared.chainSteps.slice(from, to) as ChainStep[]).map((step) => (step.dbProps ? { ...step, db: stores[step.id] ?? {} } : step));
    // Accounts read now, for this batch: a token refreshed or an account reconnected since the last one is seen.
    // Steps without app props (the usual run) skip it, and its promises, on this hot path.
    const appSteps = prepared.appSteps.slice(from, to);
    const steps = appSteps.some(Boolean) ? await this.withAccounts(workflow.ownerId, appSteps, withStores) : withStores;
    this.options.lateFaults?.remember(workflow.ownerId, prepared.bundle!.id, workflow.id);
    // Read now, for this batch: a variable changed since the last one is seen; one not set is left out, and the step that reads it fails naming it.
    const env = await this.options.envVars.resolve(workflow.ownerId, [...new Set(prepared.envNames.slice(from, to).flat())]);
    const requests: InvokeRequest[] = runs.map((run) => ({
      bundle: prepared.bundle!,
      call: {
        kind: "steps",
        steps,
        scope: run.scope,
        // Without respond: "workflow" the platform answers the caller, and the runner tells a $.respond() so.
        platformAnswers: workflow.respond !== "workflow",
        ...(Object.keys(env).length > 0 ? { env } : {}),
        flowUrls: flowUrls(this.options.baseUrl?.() ?? "", workflow.ownerId, run.id, run.flow?.token ?? run.flowToken),
        context: { deadline: startedAt + timeoutMs, run: contextRunOf(run, from), workflowId: workflow.id, stepId: steps[0]!.id, id: run.id, emitter_id: run.delivery.emitterId, event_id: run.delivery.eventId },
      },
      props: {},
      dbProps: [],
      db: {},
      limits: { timeoutMs, memoryMb: this.options.limits.memoryMb, maxLogBytes: 1024 * 1024 },
    }));
    const onDataStore = prepared.dataStores.length > 0 ? this.options.dataStores?.handlerFor(workflow.ownerId, prepared.dataStores) : undefined;
    const accounts = this.accountsOf(appSteps, withStores);
    const onAuth = accounts.length > 0 ? this.options.accountAuth?.refreshHandler(workflow.ownerId, accounts) : undefined;
    // The runs' last steps: when their call ends, a held answer waits for the batch's record rather than recording a delivery.
    const lastSegment = to === workflow.steps.length;
    const callbacks = runs.map((run) => ({
      onRespond: (response: HttpResponse) => this.respond(workflow, run, response),
      stopHandle: (run.stopHandle = {}),
      ...(lastSegment ? { onEnded: () => void (run.stepsEnded = true) } : {}),
      ...(onDataStore ? { onDataStore } : {}),
      ...(onAuth ? { onAuth } : {}),
    }));
    const chunks: Array<Promise<InvokeResult[]>> = [];
    for (let first = 0; first < requests.length; first += STEP_CALLS_PER_RUNNER) {
      chunks.push(this.options.sandbox.invokeBatch(requests.slice(first, first + STEP_CALLS_PER_RUNNER), callbacks.slice(first, first + STEP_CALLS_PER_RUNNER), { concurrent: true }));
    }
    const results = (await Promise.all(chunks)).flat();
    results.forEach((result, position) => this.applySegment(workflow, workflow.steps.slice(from, to), runs[position]!, result, startedAt, stores));
  }

  /** The accounts the steps' app props are configured with. */
  private accountsOf(components: Array<ValidatedComponent | null>, steps: ChainStep[]): string[] {
    const auth = this.options.accountAuth;
    if (!auth) return [];
    return steps.flatMap((step, position) => (components[position] ? auth.accountIdsOf(components[position]!, step.props) : []));
  }

  /** The steps with each app prop's configured account swapped for its `$auth` (or the AuthError the step fails with). */
  private async withAccounts(ownerId: string, components: Array<ValidatedComponent | null>, steps: ChainStep[]): Promise<ChainStep[]> {
    const auth = this.options.accountAuth;
    return Promise.all(
      steps.map(async (step, position) => {
        const component = components[position];
        if (!component) return step;
        if (auth) return { ...step, props: await auth.resolveProps(ownerId, component, step.props) };
        const props = { ...step.props };
        for (const prop of component.props) if (prop.baseType === "app") props[prop.name] = { $auth: {} };
        return { ...step, props };
      }),
    );
  }

  /** What the runner reported of each step, in order; a step it died in (or never reported) fails with the call's error. */
  private applySegment(workflow: Workflow, steps: WorkflowStep[], run: RunState, result: InvokeResult, startedAt: number, stores: Record<string, DbSnapshot>): void {
    const logsOf = (start: number, end: number) => result.logs.slice(start, Math.min(end, start + MAX_LOG_ENTRIES_PER_STEP)).map((log) => ({ stream: log.stream, text: log.text, ts: log.ts }));
    let logStart = 0;
    let at = startedAt;
    for (const [position, step] of steps.entries()) {
      const done = result.chain?.[position];
      // A cancelled run's call stopped before this step: it never ran (unless its runner was stopped in it: recorded so).
      if (!done && run.cancel && result.error?.code !== "Cancelled") return;
      if (!done) {
        const error = result.error ?? { code: "RunnerCrashed" as const, name: "RunnerCrashed", message: "The runner stopped without reporting the step." };
        recordStep(run, step, { status: "error", returnValue: null, exports: {}, summary: null, logs: logsOf(logStart, result.logs.length), startedAt: Math.round(at), durationMs: Math.max(0, Math.round(this.now() - at)), sends: [] });
        failRun(run, step, { code: runErrorCodeOf(error.code), ...fromSandboxError(error) }, this.now());
        return;
      }
      const exit = done.step.exit;
      recordStep(run, step, {
        status: done.error ? "error" : exit ? "exited" : "success",
        returnValue: done.value ?? null,
        exports: done.step.exports,
        summary: done.step.summary,
        logs: logsOf(logStart, done.logsEnd),
        startedAt: Math.round(at),
        durationMs: Math.round(done.durationMs * 1000) / 1000,
        // Recorded pending; finishedRun settles them by how the run ended, the destinations after it.
        sends: done.step.sends.map((send) => sendRecord(send, workflow.id, "pending")),
      });
      logStart = done.logsEnd;
      at += done.durationMs;
      if (done.db) this.keepStoreWrites(workflow, run, step, stores, done.db);
      if (done.error) {
        failRun(run, step, { code: runErrorCodeOf(done.error.code), ...fromSandboxError(done.error) }, this.now());
        return;
      }
      const stepPosition = run.records.length - 1;
      run.sends.push(...done.step.sends);
      run.sendPlaces.push(...done.step.sends.map((_, send) => ({ step: stepPosition, send })));
      if (exit) {
        run.status = "exited";
        run.exitReason = exit.reason;
        return;
      }
      if (done.step.flow) return applyFlowRequest(run, step, workflow.steps.indexOf(step), done.step.flow, this.now());
    }
  }

  /**
   * A step's changes to its store, kept for the run's commit when the store
   * they make stays within a store's limit (the runner checked it; its word
   * is not trusted) and the step has a store at all.
   */
  private keepStoreWrites(workflow: Workflow, run: RunState, step: WorkflowStep, stores: Record<string, DbSnapshot>, changes: StepStoreChanges): void {
    const before = stores[step.id];
    const after: DbSnapshot = { ...before, ...changes.set };
    for (const key of changes.removed) delete after[key];
    const bytes = Buffer.byteLength(JSON.stringify(after));
    if (before === undefined || bytes > DB_MAX_BYTES) {
      this.options.logger.warn({ workflowId: workflow.id, stepId: step.id, bytes }, "a step's $.service.db changes were refused (no such store, or past its limit)");
      return;
    }
    run.storeWrites.push({ stepId: step.id, set: changes.set, removed: changes.removed });
  }

  /** A built-in action (Runnel's own code), run here for each run, its props evaluated against what the run has so far. */
  private async runBuiltin(workflow: Workflow, index: number, runs: RunState[]): Promise<void> {
    const step = workflow.steps[index]!;
    const env = await this.options.envVars.resolve(workflow.ownerId, envNamesIn(step.props));
    for (const run of runs) {
      const startedAt = this.now();
      const failed = (code: RunErrorCode, failure: { name: string; message: string; stack?: string | undefined }) => {
        recordStep(run, step, { status: "error", returnValue: null, exports: {}, summary: null, logs: [], startedAt, durationMs: this.now() - startedAt, sends: [] });
        failRun(run, step, { code, name: failure.name, message: failure.message, stack: failure.stack }, this.now());
      };
      let props: Record<string, unknown>;
      try {
        props = evaluateStepProps(step.props, run.scope, { name: step.name, field: `steps[${index}]` }, env);
      } catch (error) {
        failed("ConfigurationError", { name: "ConfigurationError", message: (error as Error).message });
        continue;
      }
      try {
        const result = await this.options.builtins.run(step.key ?? "", { workflow, step, props, steps: run.scope, runId: run.id });
        recordStep(run, step, { status: "success", returnValue: result.value ?? null, exports: result.exports ?? {}, summary: result.summary ?? null, logs: [], startedAt, durationMs: this.now() - startedAt, sends: [] });
      } catch (error) {
        // Runnel's own code failed: its frames name files of the server and say nothing to the author, so the stack is the message alone.
        const failure = error instanceof Error ? error : new Error(String(error));
        failed("InternalFailure", { name: failure.name, message: failure.message });
      }
    }
  }

  private respond(workflow: Workflow, run: RunState, response: HttpResponse): void {
    if (run.responded) return;
    run.responded = true;
    if (workflow.respond !== "workflow") return;
    if (!run.delivery.unrecorded) {
      // Admitted by a record still being committed (ClaimedDelivery.admission): the caller hears from the run only
      // once that commit is durable. Should it fail, the event is admitted again later, and that run answers.
      if (run.securing) return void run.securing.then(() => this.answer(run, response), () => undefined);
      return this.answer(run, response);
    }
    // Nothing durable says this run will happen yet. Most answers come with the run's end, in the
    // same read from the runner: they go with its record. One that comes earlier (a step that
    // answers, then goes on working) waits only for its delivery to be recorded.
    run.heldResponse = response;
    setImmediate(() => this.secureHeldAnswer(run));
  }

  private answer(run: RunState, response: HttpResponse): void {
    this.options.responses.settle(run.delivery.emitterId, run.delivery.eventId, { kind: "response", response });
  }

  /**
   * A held answer of a run still going: its delivery is recorded (leased to
   * this process), then the caller answered. A run whose steps have ended
   * (its answer and its ending came in one read, but the other runs of its
   * batch are still out) waits a moment for the batch's record instead: a
   * delivery row written and deleted at once is most of a run's store work.
   */
  private secureHeldAnswer(run: RunState, waited = false): void {
    const response = run.heldResponse;
    // A chain's follower is answered with the chain's record (RunState.chained).
    if (run.recording || !response || run.chained) return;
    if (run.stepsEnded && !waited) {
      setTimeout(() => this.secureHeldAnswer(run, true), ENDED_RUN_ANSWER_WAIT_MS);
      return;
    }
    run.heldResponse = null;
    const delivery = run.delivery;
    // From now on the run's record removes the row; the record waits for it to be written (securing).
    delete delivery.unrecorded;
    run.securing = this.options.store.enqueueDeliveries([delivery], { claimer: this.options.claimer ?? null, until: delivery.availableAt }).then(
      () => this.answer(run, response),
      (error: unknown) => {
        this.options.logger.error({ err: error, runId: run.id }, "could not record a run's delivery; its caller is answered once the run is recorded");
        delivery.unrecorded = true;
        run.heldResponse = response;
      },
    );
  }

  /**
   * A run that waits to retry keeps its delivery: one handed over without a
   * row (EventBatch.held) is recorded now, leased to this process, so that
   * the queue can put it back due at its time, and its next claim counts as
   * a second one (which is what makes that claim look for the continuation).
   */
  private async recordWaitingDeliveries(runs: RunState[]): Promise<void> {
    const held = runs.filter((run) => isWaitingStatus(run.status) && run.delivery.unrecorded).map((run) => run.delivery);
    if (held.length === 0) return;
    await this.options.store.enqueueDeliveries(held, { claimer: this.options.claimer ?? null, until: Math.max(...held.map((delivery) => delivery.availableAt)) });
    for (const delivery of held) delete delivery.unrecorded;
  }

  private async commit(workflow: Workflow, runs: RunState[], triggerKind: "http" | "timer" | "other", chains: LineChain[] = []): Promise<number> {
    const { store, hub } = this.options;
    for (const run of runs) run.recording = true;
    const securing = runs.flatMap((run) => (run.securing ? [run.securing] : []));
    if (securing.length > 0) await Promise.all(securing);
    await this.recordWaitingDeliveries(runs);
    const now = this.now();
    const appends: EventBatch[] = [];
    for (const run of runs) {
      const logged = logsAppend(workflow, run, now);
      if (logged) appends.push(logged);
      if (run.status === "error") appends.push(errorAppend(workflow, run, now));
      // A cancelled run emits nothing, not even an error; a delayed one emits when it ends.
      else if (run.status === "cancelled" || run.status === "delayed") continue;
      else if (run.status === "retrying") {
        // Only the final failure goes to $errors, unless every attempt's is asked for.
        if (workflow.settings.errorsOnEachAttempt) appends.push(errorAppend(workflow, run, now));
      } else {
        const emitted = emitAppend(workflow, run, now);
        if (emitted) appends.push(emitted);
      }
    }
    const finished = runs.map((run) => finishedRun(workflow, run, now));
    const stepStores = runs.flatMap((run) => (run.status === "cancelled" ? [] : run.storeWrites).map((write) => ({ ...write, ownerId: workflow.ownerId, workflowId: workflow.id, runId: run.id })));
    const sends = runs.flatMap((run) => outboxSendsOf(workflow, run, now));
    // The sends go in the outbox in the transaction that records their run: recorded means they will be carried out.
    // A gated workflow's ended runs admit the next waiting events: handed over at once, as an append's deliveries are.
    const admitClaim = this.options.handOff?.claimFor() ?? undefined;
    const rows = recordedDeliveries(runs, this.options.deliveriesInStore !== false);
    // A worker here may take them before the record commits (takeBeforeCommit): a one-at-a-time line's next run starts then.
    const takeBeforeCommit = this.options.handOff?.takeBeforeCommit?.bind(this.options.handOff);
    const { appended, recorded, admitted, admittedPending, admittedLaterAt } = await store.finishRuns({
      runs: finished,
      deliveries: rows,
      appends,
      sends,
      now,
      ...(stepStores.length > 0 ? { stepStores } : {}),
      ...(chains.length > 0 ? { chains } : {}),
      ...(admitClaim ? { admitClaim, ...(takeBeforeCommit ? { onAdmitted: takeBeforeCommit } : {}) } : {}),
    });
    for (const delivery of rows) if (delivery.storeRow === "held") delivery.storeRow = "removed";
    for (const head of admitted ?? []) {
      for (const follower of head.followers ?? []) this.followers.set(followerKey(head.listenerId, follower.eventId), { ownerId: head.ownerId, delivery: follower, runId: newId("run", now), started: false });
    }
    if (admitted && admitted.length > 0) this.options.handOff?.take(admitted);
    if (admittedPending) this.options.onAdmittedPending?.();
    // Due later (rate limits): told when, so that an idle claimer wakes then rather than at its next poll.
    for (const at of [admittedLaterAt, ...appended.map((result) => result.laterAt)]) if (at !== undefined) this.options.handOff?.dueAt?.(at);
    for (const result of appended) for (const event of [...result.events, ...(result.logEvents ?? [])]) hub.publish(workflow.id, { kind: "event", channel: event.channel, item: event });
    if (this.metrics.enabled) this.countRuns(runs, recorded, triggerKind, appended);
    // A run whose key was recorded before (a second claimer of the same delivery, after a lease expired) is
    // not recorded now, and enqueued no sends: they were enqueued with the run that was.
    if (sends.some((send) => recorded.has(send.runId))) this.options.onSendsEnqueued?.();
    for (const run of runs) {
      if (run.heldResponse) this.answer(run, run.heldResponse);
      else if (workflow.respond === "workflow" && !run.responded) {
        const failed = run.status === "error" || run.status === "retrying";
        const stepName = failed ? (workflow.steps.find((step) => step.id === run.error?.cellId)?.name ?? null) : null;
        // The caller cannot wait for a retry after a backoff: it is told the run failed (the retry goes on).
        // A delayed run goes on later: its caller is told it was accepted (success); a cancelled one, that it stopped (exited).
        const status = run.status === "running" || run.status === "delayed" ? "success" : run.status === "retrying" ? "error" : run.status === "cancelled" ? "exited" : run.status;
        this.options.responses.settle(run.delivery.emitterId, run.delivery.eventId, { kind: "ended", status, runId: run.id, workflowName: workflow.name, stepName });
      }
    }
    return appended.reduce((sum, result) => sum + result.deliveries, 0);
  }

  /** Runs recorded now (not those a redelivery had recorded before), from their start to their record. */
  private countRuns(runs: RunState[], recorded: Set<string>, triggerKind: "http" | "timer" | "other", appended: Array<{ events: unknown[] }>): void {
    const now = this.now();
    for (const run of runs) {
      // A run waiting to retry has not ended: it is counted when it does.
      if (!recorded.has(run.id) || isWaitingStatus(run.status) || run.status === "cancelled") continue;
      this.metrics.runEnded({
        kind: "workflow",
        trigger: runTriggerOf(run, triggerKind),
        outcome: run.status === "error" ? "error" : "success",
        durationMs: now - run.startedAt,
        errorCode: run.error?.code,
      });
    }
    const events = appended.reduce((sum, result) => sum + result.events.length, 0);
    if (events > 0) this.metrics.eventsEmitted("workflow", events);
  }
}

/** A run started by a person (run now, a test run, a replay) is manual, whatever its source; one not from an HTTP or timer source ran on an emitted event. */
function runTriggerOf(run: RunState, triggerKind: "http" | "timer" | "other"): RunTriggerKind {
  if (run.delivery.channel === MANUAL_RUN_CHANNEL || run.delivery.channel === "$replay") return "manual";
  return triggerKind === "other" ? "emit" : triggerKind;
}

/**
 * The runs' deliveries that have a row to remove (those handed over
 * unrecorded have none; those of runs waiting to retry stay). With a shared
 * queue (`inStore` false) only the store rows held beside it: its jobs are
 * completed after the commit.
 */
function recordedDeliveries(runs: RunState[], inStore: boolean): ClaimedDelivery[] {
  const recorded: ClaimedDelivery[] = [];
  for (const run of runs) {
    const { delivery } = run;
    if (delivery.unrecorded || isWaitingStatus(run.status) || !(inStore || delivery.storeRow === "held")) continue;
    recorded.push(delivery);
  }
  return recorded;
}

/**
 * The sends of a run that go through the send outbox: all but emits
 * (appended with the run), none of a failed run (dropped with it). Each is
 * keyed by its place in the run record, which is also its idempotency key.
 */
function outboxSendsOf(workflow: Workflow, run: RunState, now: number): NewOutboxSend[] {
  // A run waiting to retry keeps its sends in its continuation: they go out once it ends well.
  if (run.status === "error" || run.status === "cancelled" || isWaitingStatus(run.status)) return [];
  const sends: NewOutboxSend[] = [];
  run.sends.forEach((send, index) => {
    const place = run.sendPlaces[index];
    if (send.type === "emit" || !place) return;
    sends.push({
      id: sendIdempotencyKey(run.id, place.step, place.send),
      ownerId: workflow.ownerId,
      workflowId: workflow.id,
      runId: run.id,
      step: place.step,
      send: place.send,
      type: send.type as OutboxSendType,
      payload: send.payload,
      context: {
        cellId: run.records[place.step]?.id ?? "",
        originalEvent: run.triggerEvent,
        originalEventId: run.delivery.eventId,
        originalEventAtMs: run.delivery.indexedAtMs,
        sourceType: run.sourceType,
        handlingError: run.handlingError,
      },
      availableAt: now,
      createdAt: now,
    });
  });
  return sends;
}

function followerKey(workflowId: string, eventId: string): string {
  return `${workflowId} ${eventId}`;
}

/** The steps' stores as a run left them (its `$.service.db` writes applied), for the run after it in a chain. */
function storesAfter(stores: Record<string, DbSnapshot>, run: RunState): Record<string, DbSnapshot> {
  // A cancelled run's writes are dropped with it (see commit).
  if (run.storeWrites.length === 0 || run.status === "cancelled") return stores;
  const after = { ...stores };
  for (const write of run.storeWrites) {
    const store: DbSnapshot = { ...after[write.stepId], ...write.set };
    for (const key of write.removed) delete store[key];
    after[write.stepId] = store;
  }
  return after;
}
