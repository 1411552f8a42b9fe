import { ConflictError, ValidationError } from "../../domain/errors.js";
import type { StoredEvent } from "../../domain/sources.js";
import { stepResults, type StepRecord, type Workflow, type WorkflowRun, type WorkflowStep } from "../../domain/workflows.js";
import type { StepSend } from "../../sandbox/protocol.js";
import type { ClaimedDelivery, Store } from "../../store/store.js";
import { failRun, type RunState } from "./run-state.js";

/** Where a replay starts: the trigger (the whole workflow again, the default) or the step the run failed at. */
export const REPLAY_FROM = ["trigger", "failed_step"] as const;
export type ReplayFrom = (typeof REPLAY_FROM)[number];
/** Whose code a replay runs: the workflow as it is now (the default), or the version the failed run ran. */
export const REPLAY_CODE = ["current", "failed_run"] as const;
export type ReplayCode = (typeof REPLAY_CODE)[number];

export interface ReplayChoice {
  from: ReplayFrom;
  withCode: ReplayCode;
}

/**
 * What a `$replay` delivery carries beside the original event to start at the
 * failed step: the failed run's records of the steps before it (results,
 * exports, logs) and what they sent, copied when the replay is asked for, so
 * that the replay does not depend on the failed run still being kept.
 */
export interface ReplayResume {
  run_id: string;
  /** The failed step (`c_…`): the replay starts there. */
  step_id: string;
  steps: StepRecord[];
  sends: Array<{ type: string; payload: unknown }>;
  send_places: Array<{ step: number; send: number }>;
}

/** What a replay adds to its delivery (`$replay`) beyond today's original event: the version to run, where to start. */
export interface ReplayPlan {
  /** The workflow version whose code runs; absent: the workflow as it is when the replay runs. */
  version?: number;
  resume?: ReplayResume;
}

/** `from` and `with_code` of a replay request, checked; each absent one is its default. */
export function readReplayChoice(body: { from?: unknown; with_code?: unknown }): ReplayChoice {
  const from = body.from ?? "trigger";
  if (typeof from !== "string" || !(REPLAY_FROM as readonly string[]).includes(from)) {
    throw new ValidationError("from", `from must be "trigger" (run the whole workflow again, the default) or "failed_step" (start at the step that failed, reusing the results of the steps before it); got ${JSON.stringify(from)}.`);
  }
  const withCode = body.with_code ?? "current";
  if (typeof withCode !== "string" || !(REPLAY_CODE as readonly string[]).includes(withCode)) {
    throw new ValidationError("with_code", `with_code must be "current" (the workflow as it is now, the default) or "failed_run" (the code the failed run ran); got ${JSON.stringify(withCode)}.`);
  }
  return { from: from as ReplayFrom, withCode: withCode as ReplayCode };
}

/**
 * What the replay of one error needs, checked now so that the caller hears
 * at once why it cannot be done (a ConflictError saying what to do instead).
 * Replaying from the trigger with the current code needs nothing: today's replay.
 */
export async function planReplay(store: Store, workflow: Workflow, error: StoredEvent, choice: ReplayChoice): Promise<ReplayPlan> {
  if (choice.from === "trigger" && choice.withCode === "current") return {};
  // A failed run's error is emitted under its run id; a failed `$.send`'s (DestinationFailed) under `<run id>:<step>:<send>`.
  const runId = error.emitId?.split(":")[0];
  const run = runId ? await store.findRun(workflow.ownerId, runId) : null;
  if (!run) {
    throw new ConflictError(
      `The run of error ${error.id} is no longer kept (a workflow keeps its last 1,000 runs), so its steps' results and the code version it ran are gone. Replay it from the trigger with the current code: {"from": "trigger", "with_code": "current"}.`,
    );
  }
  const steps = choice.withCode === "current" ? workflow.steps : await stepsOfVersion(store, workflow, error, run);
  const version = choice.withCode === "failed_run" && run.workflowVersion !== (workflow.version ?? 1) ? { version: run.workflowVersion! } : {};
  if (choice.from === "trigger") return version;
  return { ...version, resume: resumeOf(error, run, steps) };
}

async function stepsOfVersion(store: Store, workflow: Workflow, error: StoredEvent, run: WorkflowRun): Promise<WorkflowStep[]> {
  if (run.workflowVersion === undefined || run.workflowVersion === null) {
    throw new ConflictError(`The run of error ${error.id} was recorded before workflow versions were kept, so the code it ran is not known. Replay it with the current code: {"with_code": "current"}.`);
  }
  if (run.workflowVersion === (workflow.version ?? 1)) return workflow.steps;
  const saved = await store.findWorkflowVersion(workflow.ownerId, workflow.id, run.workflowVersion);
  if (!saved) {
    throw new ConflictError(`Version ${run.workflowVersion} of the workflow, which the run of error ${error.id} ran, is no longer kept. Replay it with the current code: {"with_code": "current"}.`);
  }
  return saved.steps;
}

/** The failed run's records before its failed step, checked against the steps that will run. */
function resumeOf(error: StoredEvent, run: WorkflowRun, steps: WorkflowStep[]): ReplayResume {
  if (run.status === "retrying") {
    const next = run.nextAttemptAt ? ` (next attempt at ${new Date(run.nextAttemptAt).toISOString()})` : "";
    throw new ConflictError(`The run of error ${error.id} is still retrying its failed step${next}; wait for it to end, then replay the error if it fails again.`);
  }
  if (run.status !== "error" && (error.event as { error?: { code?: unknown } } | null)?.error?.code === "DestinationFailed") {
    throw new ConflictError(`Error ${error.id} is a $.send that failed after its run ended well (DestinationFailed): no step failed, so there is no failed step to replay from. Replay it from the trigger: {"from": "trigger"}.`);
  }
  if (run.status !== "error") {
    throw new ConflictError(`The run of error ${error.id} ended ${run.status === "exited" ? "early ($.flow.exit)" : "well"} on a later attempt: there is no failed step to replay from. Replay it from the trigger if you want it to run again: {"from": "trigger"}.`);
  }
  const failedAt = run.steps.findIndex((record) => record.id === run.error?.cellId);
  if (failedAt < 0) {
    throw new ConflictError(`Error ${error.id} did not happen in a step of the workflow (it failed before any step ran), so there is no failed step to replay from. Replay it from the trigger: {"from": "trigger"}.`);
  }
  const failed = run.steps[failedAt]!;
  const kept = run.steps.slice(0, failedAt);
  if (kept.some((record) => record.status !== "success")) {
    throw new ConflictError(`The steps before "${failed.name}" did not all succeed in the run of error ${error.id}, so they cannot be reused. Replay it from the trigger: {"from": "trigger"}.`);
  }
  if (kept.some((record) => record.sends.length > 0) && !run.continuation) {
    throw new ConflictError(`The run of error ${error.id} was recorded before failed runs kept what their steps sent, so the steps before "${failed.name}" cannot be reused. Replay it from the trigger: {"from": "trigger"}.`);
  }
  const at = steps.findIndex((step) => step.id === failed.id);
  if (at < 0) {
    throw new ConflictError(`The failed step "${failed.name}" is no longer in the workflow's current code. Replay with the code the failed run ran ({"with_code": "failed_run"}), or from the trigger ({"from": "trigger"}).`);
  }
  if (at !== failedAt || kept.some((record, index) => record.id !== steps[index]!.id)) {
    const ran = kept.map((record) => record.name).join(", ") || "none";
    const now = steps.slice(0, at).map((step) => step.name).join(", ") || "none";
    throw new ConflictError(`The steps before "${failed.name}" changed since the failed run (it ran ${ran}; the workflow now has ${now}), so their recorded results do not fit. Replay with the code the failed run ran ({"with_code": "failed_run"}), or from the trigger ({"from": "trigger"}).`);
  }
  return { run_id: run.id, step_id: failed.id, steps: kept, sends: run.continuation?.sends ?? [], send_places: run.continuation?.sendPlaces ?? [] };
}

/** The `$replay` body of a delivery, or null for any other delivery. */
function replayBodyOf(delivery: ClaimedDelivery): (ReplayPlan & Record<string, unknown>) | null {
  if (delivery.channel !== "$replay" || typeof delivery.event !== "object" || delivery.event === null) return null;
  return delivery.event as ReplayPlan & Record<string, unknown>;
}

/** The workflow version a delivery asks to run, when it is not the workflow's current one. */
export function versionAskedFor(workflow: Workflow, delivery: ClaimedDelivery): number | null {
  const version = replayBodyOf(delivery)?.version;
  return typeof version === "number" && version !== (workflow.version ?? 1) ? version : null;
}

/**
 * A replay run set up to start at the failed step: the records of the steps
 * before it copied from the failed run (marked reused, their sends pending
 * again: they go out with this run), what they sent, and where to start. A
 * run asking for a version of the code it did not get (no longer kept), or
 * whose steps changed since the replay was asked for, fails saying so.
 */
export function resumeReplay(run: RunState, workflow: Workflow, now: number): void {
  const body = replayBodyOf(run.delivery);
  if (!body) return;
  const first = workflow.steps[0];
  const resume = body.resume;
  const failHere = (message: string) => {
    const step = (resume && workflow.steps.find((candidate) => candidate.id === resume.step_id)) ?? first;
    if (step) failRun(run, step, { code: "ConfigurationError", name: "ConfigurationError", message }, now);
  };
  if (typeof body.version === "number" && body.version !== (workflow.version ?? 1)) {
    return failHere(`This replay was to run version ${body.version} of the workflow's code, which is no longer kept. Replay the error again with the current code ({"with_code": "current"}).`);
  }
  if (!resume) return;
  const at = workflow.steps.findIndex((step) => step.id === resume.step_id);
  if (at < 0 || at !== resume.steps.length || resume.steps.some((record, index) => record.id !== workflow.steps[index]!.id)) {
    return failHere("The workflow's steps changed after this replay from the failed step was asked for, so the failed run's results no longer fit. Replay the error again.");
  }
  run.records = resume.steps.map((record) => ({ ...record, reused: true, sends: record.sends.map((send) => ({ ...send, status: "pending" as const, detail: null })) }));
  for (const record of run.records) run.scope[record.name] = stepResults(record);
  run.sends = resume.sends as StepSend[];
  run.sendPlaces = resume.send_places;
  run.resumeAt = at;
}
