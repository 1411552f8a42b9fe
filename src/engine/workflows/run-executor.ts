import type { Logger } from "pino";
import { evaluateStepProps } from "../../domain/expressions.js";
import { sendRecord, type SendOutcome } from "../../domain/send-records.js";
import type { SavedComponent } from "../../domain/sources.js";
import { runErrorCodeOf, type RunErrorCode, type Workflow, type WorkflowStep } from "../../domain/workflows.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { ChainStep } from "../../sandbox/protocol.js";
import type { ComponentBundle, InvokeRequest, InvokeResult, Sandbox } from "../../sandbox/sandbox.js";
import type { ClaimedDelivery, EventBatch, Store } from "../../store/store.js";
import type { BundleFiles } from "../bundle-files.js";
import type { ComponentLoader } from "../component-loader.js";
import type { EventHub } from "../event-hub.js";
import type { LateFaults } from "../late-faults.js";
import type { SecretBox } from "../secrets.js";
import { openSecrets } from "../sources/props.js";
import type { RunLimits } from "../sources/invoker.js";
import type { BuiltinActions } from "./builtin-actions.js";
import type { Destinations } from "./destinations.js";
import { emitAppend, errorAppend, failRun, logsAppend, finishedRun, fromSandboxError, recordStep, skipRest, startRun, type RunState } from "./run-state.js";
import { workflowBundle } from "./workflow-bundle.js";
import type { WorkflowResponses } from "./workflow-responses.js";

export interface RunExecutorOptions {
  store: Store;
  sandbox: Sandbox;
  loader: ComponentLoader;
  bundleFiles: BundleFiles;
  hub: EventHub;
  responses: WorkflowResponses;
  builtins: BuiltinActions;
  destinations: Destinations;
  logger: Logger;
  limits: RunLimits;
  /** Opens sealed secret step props, just before the steps run. */
  secrets: SecretBox;
  /** Told which workflow runs which bundle, so that a fault after a run reaches the workflow's logs. */
  lateFaults?: LateFaults;
  /** A delivery whose runs were cut off this many times by their process dying is not run again (RUNNEL_MAX_RUN_INTERRUPTIONS). Default 3. */
  maxInterruptions?: number;
  now?: () => number;
}

/**
 * A workflow ready to run: for each step, how the runner calls it (its place
 * in the bundle, its props with declared defaults), or null for a built-in
 * step; and the one bundle of its sandboxed steps.
 */
interface PreparedWorkflow {
  chainSteps: Array<ChainStep | null>;
  bundle: ComponentBundle | null;
}

const MAX_LOG_ENTRIES_PER_STEP = 200;
/** Interruptions after which a delivery is recorded as a RepeatedCrash instead of run again (RUNNEL_MAX_RUN_INTERRUPTIONS's default). */
export const DEFAULT_MAX_RUN_INTERRUPTIONS = 3;
/** Runs sent to one runner at once (see runSegment). */
const STEP_CALLS_PER_RUNNER = 16;

/**
 * Runs a batch of deliveries of one workflow. Each run's sandboxed steps go to
 * the runner as one call (the runner evaluates props and runs the steps in
 * turn), built-in steps run here between such calls. Then one transaction
 * records the runs, removes their deliveries and appends what they emitted
 * (`$errors`, `$.send.emit`).
 */
export class RunExecutor {
  private readonly prepared = new Map<string, Promise<PreparedWorkflow>>();
  private readonly now: () => number;

  constructor(private readonly options: RunExecutorOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Runs and records the batch; resolves with how many deliveries its appends made (runs of other listeners now waiting). */
  async runBatch(workflow: Workflow, deliveries: ClaimedDelivery[], triggerKind: "http" | "timer" | "other"): Promise<number> {
    const runs = deliveries.map((delivery) => startRun(workflow, delivery, triggerKind, this.now()));
    // Ids of one millisecond sort by their random part: hand them out in delivery order, so runs list in event order.
    const ids = runs.map((run) => run.id).sort();
    runs.forEach((run, index) => (run.id = ids[index]!));
    this.abandonRepeatedCrashes(workflow, runs);
    let prepared: PreparedWorkflow | Error;
    try {
      prepared = await this.prepare(workflow);
    } catch (error) {
      prepared = error as Error;
    }
    // As for sources: runs started by an HTTP request are answered sooner than timer runs.
    const timeoutMs = triggerKind === "http" ? this.options.limits.httpTimeoutMs : this.options.limits.runTimeoutMs;
    for (let index = 0; index < workflow.steps.length; ) {
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
      await this.runSegment(workflow, prepared, index, end, active, timeoutMs);
      index = end;
    }
    for (const run of runs) if (run.status !== "running") skipRest(run, workflow.steps);
    return this.commit(workflow, runs);
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
      failRun(run, first, { code: "RepeatedCrash", name: "RepeatedCrash", message }, this.now());
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
    for (const [index, step] of workflow.steps.entries()) {
      if (step.componentId === null) {
        chainSteps.push(null);
        continue;
      }
      const saved = await store.findComponent(workflow.ownerId, step.componentId);
      if (!saved) throw new Error(`The code of step "${step.name}" (${step.componentId}) is missing; update the workflow to save it again.`);
      const props: Record<string, unknown> = {};
      for (const prop of loader.validatedOf(saved).props) if (prop.default !== undefined) props[prop.name] = prop.default;
      // Sealed secrets are opened here, into the prepared (in-memory) workflow only.
      chainSteps.push({ index: sandboxed.length, id: step.id, name: step.name, props: openSecrets({ ...props, ...step.props }, this.options.secrets), field: `steps[${index}]` });
      sandboxed.push(saved);
    }
    const bundle = sandboxed.length > 0 ? await workflowBundle(this.options.bundleFiles, workflow.ownerId, sandboxed) : null;
    return { chainSteps, bundle };
  }

  /**
   * Steps `from` to `to` (all sandboxed) of every run: one `steps` call per
   * run, in which the runner evaluates each step's props, runs it and reports
   * it; they share the run's time limit. A runner runs its calls side by side
   * (runs are independent), so runs whose steps wait on an API wait together;
   * a big batch is spread over a few runners, for the machine's cores.
   */
  private async runSegment(workflow: Workflow, prepared: PreparedWorkflow, from: number, to: number, runs: RunState[], timeoutMs: number): Promise<void> {
    const startedAt = this.now();
    const steps = prepared.chainSteps.slice(from, to) as ChainStep[];
    this.options.lateFaults?.remember(workflow.ownerId, prepared.bundle!.id, workflow.id);
    const requests: InvokeRequest[] = runs.map((run) => ({
      bundle: prepared.bundle!,
      call: {
        kind: "steps",
        steps,
        scope: run.scope,
        // Without respond: "workflow" the platform answers the caller, and the runner tells a $.respond() so.
        platformAnswers: workflow.respond !== "workflow",
        context: { deadline: startedAt + timeoutMs, run: { runs: run.delivery.attempts }, workflowId: workflow.id, stepId: steps[0]!.id, id: run.id, emitter_id: run.delivery.emitterId, event_id: run.delivery.eventId },
      },
      props: {},
      dbProps: [],
      db: {},
      limits: { timeoutMs, memoryMb: this.options.limits.memoryMb, maxLogBytes: 1024 * 1024 },
    }));
    const callbacks = runs.map((run) => ({ onRespond: (response: HttpResponse) => this.respond(workflow, run, response) }));
    const chunks: Array<Promise<InvokeResult[]>> = [];
    for (let first = 0; first < requests.length; first += STEP_CALLS_PER_RUNNER) {
      chunks.push(this.options.sandbox.invokeBatch(requests.slice(first, first + STEP_CALLS_PER_RUNNER), callbacks.slice(first, first + STEP_CALLS_PER_RUNNER), { concurrent: true }));
    }
    const results = (await Promise.all(chunks)).flat();
    results.forEach((result, position) => this.applySegment(workflow, workflow.steps.slice(from, to), runs[position]!, result, startedAt));
  }

  /** What the runner reported of each step, in order; a step it died in (or never reported) fails with the call's error. */
  private applySegment(workflow: Workflow, steps: WorkflowStep[], run: RunState, result: InvokeResult, startedAt: number): void {
    const logsOf = (start: number, end: number) => result.logs.slice(start, Math.min(end, start + MAX_LOG_ENTRIES_PER_STEP)).map((log) => ({ stream: log.stream, text: log.text, ts: log.ts }));
    let logStart = 0;
    let at = startedAt;
    for (const [position, step] of steps.entries()) {
      const done = result.chain?.[position];
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
    }
  }

  /** A built-in action (Runnel's own code), run here for each run, its props evaluated against what the run has so far. */
  private async runBuiltin(workflow: Workflow, index: number, runs: RunState[]): Promise<void> {
    const step = workflow.steps[index]!;
    for (const run of runs) {
      const startedAt = this.now();
      const failed = (code: RunErrorCode, failure: { name: string; message: string; stack?: string | undefined }) => {
        recordStep(run, step, { status: "error", returnValue: null, exports: {}, summary: null, logs: [], startedAt, durationMs: this.now() - startedAt, sends: [] });
        failRun(run, step, { code, name: failure.name, message: failure.message, stack: failure.stack }, this.now());
      };
      let props: Record<string, unknown>;
      try {
        props = evaluateStepProps(step.props, run.scope, { name: step.name, field: `steps[${index}]` });
      } catch (error) {
        failed("ConfigurationError", { name: "ConfigurationError", message: (error as Error).message });
        continue;
      }
      try {
        const result = await this.options.builtins.run(step.key ?? "", { workflow, step, props, steps: run.scope, runId: run.id });
        recordStep(run, step, { status: "success", returnValue: result.value ?? null, exports: result.exports ?? {}, summary: result.summary ?? null, logs: [], startedAt, durationMs: this.now() - startedAt, sends: [] });
      } catch (error) {
        failed("InternalFailure", error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  private respond(workflow: Workflow, run: RunState, response: HttpResponse): void {
    if (run.responded) return;
    run.responded = true;
    if (workflow.respond === "workflow") this.options.responses.settle(run.delivery.emitterId, run.delivery.eventId, { kind: "response", response });
  }

  /** Carries out the run's sends (after it is recorded), then writes what became of each into its record. */
  private carryOutSends(workflow: Workflow, run: RunState): void {
    const { destinations, store, logger } = this.options;
    destinations
      .carryOut(workflow, run.id, run.sends)
      .then((carried) => {
        const outcomes: SendOutcome[] = [];
        carried.forEach((outcome, index) => {
          const place = run.sendPlaces[index];
          // An emit was settled with the run itself.
          if (place && run.sends[index]?.type !== "emit") outcomes.push({ ...place, ...outcome });
        });
        return store.recordSendOutcomes(workflow.ownerId, run.id, outcomes);
      })
      .catch((error) => logger.error({ err: error, workflowId: workflow.id, workflowName: workflow.name, runId: run.id }, "could not carry out a run's $.send calls, or record what they did"));
  }

  private async commit(workflow: Workflow, runs: RunState[]): Promise<number> {
    const { store, hub, logger } = this.options;
    const now = this.now();
    const appends: EventBatch[] = [];
    for (const run of runs) {
      const logged = logsAppend(workflow, run, now);
      if (logged) appends.push(logged);
      if (run.status === "error") appends.push(errorAppend(workflow, run, now));
      else {
        const emitted = emitAppend(workflow, run, now);
        if (emitted) appends.push(emitted);
      }
    }
    const finished = runs.map((run) => finishedRun(workflow, run, now));
    const { appended, recorded } = await store.finishRuns({ runs: finished, deliveries: runs.map((run) => run.delivery), appends });
    for (const result of appended) for (const event of [...result.events, ...(result.logEvents ?? [])]) hub.publish(workflow.id, { kind: "event", channel: event.channel, item: event });
    // A run whose key was recorded before (a second claimer of the same delivery, after a lease expired) is
    // not recorded now: its sends went out with the run that was.
    for (const run of runs) {
      if (workflow.respond === "workflow" && !run.responded) {
        const stepName = run.status === "error" ? (workflow.steps.find((step) => step.id === run.error?.cellId)?.name ?? null) : null;
        const status = run.status === "running" ? "success" : run.status;
        this.options.responses.settle(run.delivery.emitterId, run.delivery.eventId, { kind: "ended", status, runId: run.id, workflowName: workflow.name, stepName });
      }
      if (recorded.has(run.id) && run.status !== "error" && run.sends.some((send) => send.type !== "emit")) {
        this.carryOutSends(workflow, run);
      }
    }
    return appended.reduce((sum, result) => sum + result.deliveries, 0);
  }
}
