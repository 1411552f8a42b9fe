import type { StepStoreChanges } from "../../domain/data-stores.js";
import { cutAtWord } from "../../domain/error-text.js";
import { errorEventBody, sourceTypeOf, type OriginalContext, type SourceType } from "../../domain/error-events.js";
import { newId } from "../../domain/ids.js";
import { MANUAL_RUN_CHANNEL, type ManualRunBody } from "./manual-run.js";
import type { SendRecord } from "../../domain/send-records.js";
import type { RunAttempt } from "../../domain/run-retries.js";
import { stepResults, type RunError, type RunErrorCode, type StepRecord, type Workflow, type WorkflowRun, type WorkflowStep } from "../../domain/workflows.js";
import type { HttpResponse } from "../../sandbox/http-response.js";
import type { StepSend } from "../../sandbox/protocol.js";
import type { SandboxError } from "../../sandbox/sandbox-error.js";
import type { EventBatch, ClaimedDelivery } from "../../store/store.js";
import { RUNNEL_VERSION } from "../../version.js";
import { isWaitingStatus, type FlowContinuation } from "../../domain/run-flow.js";
import { flowOf, newFlowToken, resumeDelayedRun } from "./run-flow.js";

/** A run in progress: what its steps see (`steps`) and what it records. */
export interface RunState {
  id: string;
  delivery: ClaimedDelivery;
  startedAt: number;
  /**
   * When its steps ended, when it is recorded later than that with others
   * that ran after it (a one-at-a-time line's chain): its record's end, so
   * that it shows ended before the next began. Otherwise its record's time.
   */
  endedAt?: number;
  /**
   * A follower of a one-at-a-time line's chain (RunExecutor.runFollowers):
   * its place in the line is recorded only with the chain, so an answer it
   * gives before its steps end waits for that record rather than recording
   * a delivery of its own (which a crash would leave running beside its line).
   */
  chained?: true;
  triggerEvent: unknown;
  replayOf: string | null;
  sourceType: SourceType;
  /** `steps` as the next step sees it: `trigger` and each finished step's return value and exports. */
  scope: Record<string, unknown>;
  records: StepRecord[];
  status: "running" | WorkflowRun["status"];
  error: RunError | null;
  exitReason: string | null;
  sends: StepSend[];
  /** Where each of `sends` is in the run record: its step's position and its own in that step. */
  sendPlaces: Array<{ step: number; send: number }>;
  responded: boolean;
  /**
   * Its `$.respond` answer, held back while nothing durable says the run will
   * happen (its delivery was handed over unrecorded): given to the caller once
   * the run, or its delivery, is recorded.
   */
  heldResponse: HttpResponse | null;
  /**
   * What must be written before the run's record: its delivery, recorded so
   * that a held answer can go before the run ends, or the commit of the
   * record that admitted it (ClaimedDelivery.admission; failed, the run is
   * not recorded: its record's commit fails with it).
   */
  securing: Promise<void> | null;
  /** Its record is being written: a held answer goes with it. */
  recording: boolean;
  /** Its last steps' call ended in the runner: its record follows with its batch's, and a held answer goes with that. */
  stepsEnded: boolean;
  /** The run handles an error (a `$errors` event, or a replay of a run that did): its own error is routed nowhere. */
  handlingError: boolean;
  /** What its steps changed in their `$.service.db`, written when the run is recorded. */
  storeWrites: Array<{ stepId: string } & StepStoreChanges>;
  /** This execution of the run (1: its first; a retry of a step is one more). */
  attempt: number;
  /** Its failed attempts so far (see step-retries.ts). */
  attempts: RunAttempt[];
  /** Failed tries per step id. */
  tries: Record<string, number>;
  /** The step it starts at: 0, or the failed step of a run resumed to retry it. */
  resumeAt: number;
  /** This execution's failure, when its step has retries (see step-retries.ts). */
  failedAttempt: RunAttempt | null;
  /** When it ends `retrying`: when its next attempt is due. */
  nextAttemptAt: number | null;
  /** What the failing step's error said of retrying it (`error.retryable`), when it said anything. */
  errorRetryable?: boolean | undefined;
  /** The secret of its resume and cancel URLs (run-flow.ts); a resumed run keeps its continuation's. */
  flowToken: string;
  /** While it waits or was resumed after a wait ($.flow.delay / $.flow.rerun): see run-flow.ts. */
  flow?: FlowContinuation | undefined;
  /** A person cancelled it while it ran: it stops before its next step and is recorded `cancelled`. */
  cancel?: { by: string; at: number } | undefined;
  /** Stops its runner call before the next step (set by the sandbox while a call of its steps is out). */
  stopHandle?: { stop?: () => void } | undefined;
}

/** Starts a run of `workflow` for a delivery; a replay's delivery carries the original event and the error it replays. */
export function startRun(workflow: Workflow, delivery: ClaimedDelivery, triggerKind: "http" | "timer" | "other", now: number): RunState {
  const replay = delivery.channel === "$replay" ? (delivery.event as { original_event?: unknown; replay_of?: unknown; source_type?: unknown }) : null;
  const manual = delivery.channel === MANUAL_RUN_CHANNEL ? (delivery.event as Partial<ManualRunBody>) : null;
  const triggerEvent = replay ? (replay.original_event ?? null) : manual ? (manual.event ?? {}) : delivery.event;
  const sourceType: SourceType = manual
    ? "MANUAL"
    : replay && typeof replay.source_type === "string"
      ? (replay.source_type as SourceType)
      : sourceTypeOf(delivery.emitterId, delivery.channel, triggerKind);
  const context: OriginalContext & { emitter_id: string } = {
    id: delivery.eventId,
    ts: new Date(delivery.indexedAtMs).toISOString(),
    workflow_id: workflow.id,
    deployment_id: workflow.deploymentId,
    source_type: sourceType,
    verified: false,
    owner_id: workflow.ownerId,
    platform_version: RUNNEL_VERSION,
    emitter_id: delivery.emitterId,
  };
  return {
    // A manual run's id was given to its caller when it was queued, so that they can wait for it.
    id: manual && typeof manual.run_id === "string" ? manual.run_id : newId("run", now),
    delivery,
    startedAt: now,
    triggerEvent,
    replayOf: replay && typeof replay.replay_of === "string" ? replay.replay_of : null,
    sourceType,
    scope: { trigger: { event: triggerEvent, context } },
    records: [],
    status: "running",
    error: null,
    exitReason: null,
    sends: [],
    sendPlaces: [],
    responded: false,
    heldResponse: null,
    // Admitted by a record not yet committed when it was handed over: this run's record waits for that commit.
    securing: delivery.admission ?? null,
    recording: false,
    stepsEnded: false,
    handlingError: delivery.channel === "$errors" || (replay !== null && isErrorEventBody(triggerEvent)),
    storeWrites: [],
    attempt: 1,
    attempts: [],
    tries: {},
    resumeAt: 0,
    failedAttempt: null,
    nextAttemptAt: null,
    flowToken: newFlowToken(),
  };
}

/**
 * A run that waited to retry a step, resumed in this new execution: its id,
 * start, attempts, and (while the steps before the failed one are still the
 * workflow's first steps, by id) their records, results and sends, so that it
 * starts at the failed step. A workflow whose earlier steps changed since
 * runs again from its first step.
 */
export function resumeRun(run: RunState, waiting: WorkflowRun, steps: WorkflowStep[]): void {
  run.id = waiting.id;
  run.startedAt = waiting.startedAt;
  run.attempt = (waiting.attempt ?? 1) + 1;
  run.attempts = [...(waiting.attempts ?? [])];
  const continuation = waiting.continuation;
  if (!continuation) return;
  if (waiting.status === "delayed") return resumeDelayedRun(run, waiting, steps);
  run.tries = { ...continuation.tries };
  const failedAt = waiting.steps.findIndex((record) => record.id === waiting.error?.cellId);
  if (failedAt < 0 || failedAt >= steps.length) return;
  const kept = waiting.steps.slice(0, failedAt);
  if (kept.some((record, index) => record.id !== steps[index]!.id || record.status !== "success")) return;
  // What a replay from a failed step set up (replay-from-step.ts) is in the waiting run's record too: read from there.
  run.records = [];
  run.scope = { trigger: run.scope.trigger };
  for (const record of kept) {
    run.records.push(record);
    run.scope[record.name] = stepResults(record);
  }
  run.sends = continuation.sends as StepSend[];
  run.sendPlaces = continuation.sendPlaces;
  run.resumeAt = failedAt;
}

function isErrorEventBody(event: unknown): boolean {
  if (typeof event !== "object" || event === null) return false;
  const body = event as Record<string, unknown>;
  return typeof body.error === "object" && body.error !== null && typeof body.original_context === "object" && body.original_context !== null;
}

/** A step's outcome, recorded; `$return_value` and the exports become visible to later steps. */
export function recordStep(run: RunState, step: WorkflowStep, record: Omit<StepRecord, "id" | "name">): void {
  run.records.push({ id: step.id, name: step.name, ...record });
  run.scope[step.name] = stepResults(record);
}

export function failRun(run: RunState, step: WorkflowStep, error: { code: RunErrorCode; name: string; message: string; stack?: string | undefined; retryable?: boolean | undefined }, at: number): void {
  run.status = "error";
  run.errorRetryable = error.retryable;
  run.error = {
    code: error.code,
    msg: error.message,
    name: error.name,
    cellId: step.id,
    ts: new Date(at).toISOString(),
    stack: error.stack ?? `${error.name}: ${error.message}`,
  };
}

/** A sandbox error as the run's error fields. */
export function fromSandboxError(error: SandboxError): { name: string; message: string; stack?: string | undefined; retryable?: boolean | undefined } {
  return { name: error.name, message: error.message, stack: error.stack, ...(typeof error.retryable === "boolean" ? { retryable: error.retryable } : {}) };
}

/** The steps that never ran, after the run ended early (`pending`: a run retrying a step reaches them later). */
export function skipRest(run: RunState, steps: WorkflowStep[]): void {
  const status = isWaitingStatus(run.status) ? "pending" : "skipped";
  for (const step of steps.slice(run.records.length)) {
    run.records.push({ id: step.id, name: step.name, status, returnValue: null, exports: {}, summary: null, logs: [], startedAt: null, durationMs: 0, sends: [] });
  }
}

export function finishedRun(workflow: Workflow, run: RunState, now: number): WorkflowRun {
  return {
    id: run.id,
    ownerId: workflow.ownerId,
    workflowId: workflow.id,
    emitterId: run.delivery.emitterId,
    eventId: run.delivery.eventId,
    status: run.status === "running" ? "success" : run.status,
    triggerEvent: run.triggerEvent,
    // Object.assign, not a leading spread: every step of every run (see domain/own-copy.ts).
    steps: run.records.map((record) => Object.assign({}, record, { sends: record.sends.map((send) => settledSend(run, send)) })),
    error: run.error,
    exitReason: run.exitReason,
    replayOf: run.replayOf,
    startedAt: run.startedAt,
    finishedAt: run.endedAt ?? now,
    durationMs: Math.max(0, (run.endedAt ?? now) - run.startedAt),
    attempt: run.attempt,
    attempts: run.attempts,
    nextAttemptAt: isWaitingStatus(run.status) ? run.nextAttemptAt : null,
    // What the next attempt resumes with; gone once the run ends, but for a failed run whose steps sent something:
    // a replay from its failed step reuses those sends (replay-from-step.ts). A delayed run's says where it resumes.
    continuation:
      isWaitingStatus(run.status) || (run.status === "error" && run.sends.length > 0)
        ? { sends: run.sends, sendPlaces: run.sendPlaces, tries: run.tries, ...(flowOf(run) ? { flow: flowOf(run) } : {}) }
        : null,
    workflowVersion: workflow.version ?? 1,
    ...(run.cancel ? { cancelledBy: run.cancel.by } : {}),
  };
}

/**
 * A send's status as the run is recorded: a failed run's sends are dropped
 * (not_sent); an emit is appended in the run's own transaction (delivered);
 * the others are carried out after, and stay pending until then.
 */
function settledSend(run: RunState, send: SendRecord): SendRecord {
  if (isWaitingStatus(run.status)) return send;
  if (run.status === "cancelled") return { ...send, status: "not_sent", detail: "the run was cancelled, so its sends were dropped" };
  if (run.status === "error") return { ...send, status: "not_sent", detail: "the run failed, so its sends were dropped" };
  if (send.destination === "emit") return { ...send, status: "delivered" };
  return send;
}

/**
 * The `$errors` event of a failed run. Its routing: the global error workflow
 * (through `p_*`) unless the workflow turned notifications off; nowhere when
 * the run was itself handling an error (no loops, ever).
 */
export function errorAppend(workflow: Workflow, run: RunState, now: number): EventBatch {
  const error = run.error!;
  const body = errorEventBody({
    workflow,
    originalEvent: run.triggerEvent,
    originalEventId: run.delivery.eventId,
    originalEventAtMs: run.delivery.indexedAtMs,
    sourceType: run.sourceType,
    error,
    platformVersion: RUNNEL_VERSION,
  });
  const handlingAnError = run.handlingError;
  // A failure of a step with retries says which try it was and whether another follows, beside the seed's fields.
  const tried = run.failedAttempt;
  const event = tried ? { ...body, error: { ...body.error, attempt: tried.attempt, will_retry: tried.willRetry } } : body;
  return {
    ownerId: workflow.ownerId,
    emitterId: workflow.id,
    emits: [{ event, name: "$errors", id: run.id, summary: cutAtWord(`${error.code}: ${error.msg}`, 200) }],
    dedupe: null,
    retention: workflow.settings.errorRetention,
    now,
    deliverTo: handlingAnError ? "none" : workflow.settings.errorNotifications ? "all" : "explicit",
    runId: run.id,
  };
}

/** What `$.send.emit` calls of a run append to the workflow's default channel. */
export function emitAppend(workflow: Workflow, run: RunState, now: number): EventBatch | null {
  const emits = run.sends.filter((send) => send.type === "emit").map((send) => ({ event: (send.payload as { raw_event?: unknown }).raw_event ?? null }));
  if (emits.length === 0) return null;
  return { ownerId: workflow.ownerId, emitterId: workflow.id, emits, dedupe: null, retention: 100, now, runId: run.id };
}

/**
 * The log lines of a run's steps, for `$logs` listeners of the workflow: the
 * store appends them as events of its `$logs` channel only when one listens,
 * so a workflow nobody listens to pays a look at its subscriptions.
 */
export function logsAppend(workflow: Workflow, run: RunState, now: number): EventBatch | null {
  const lines = run.records.flatMap((record) => record.logs.map((log) => ({ stream: log.stream, text: log.text, ts: log.ts })));
  if (lines.length === 0) return null;
  return { ownerId: workflow.ownerId, emitterId: workflow.id, emits: [], logEvents: lines, dedupe: null, retention: 100, now, runId: run.id };
}
