import type { FlowContinuation } from "./run-flow.js";
import type { RetryPolicy, RunAttempt } from "./run-retries.js";
import type { SendRecord } from "./send-records.js";
import type { WorkflowSettings } from "./workflow-rules.js";
import { copyOwn } from "./own-copy.js";

/**
 * A workflow: a trigger (a subscription to a source's default channel) and
 * ordered steps. It is an emitter too (`p_…`): `$errors` carries its
 * failures, the default channel what `$.send.emit` sends.
 */
export interface Workflow {
  id: string; // p_…
  ownerId: string;
  name: string;
  nameSlug: string;
  active: boolean;
  /** The source whose default channel triggers runs; null for a workflow run only by subscriptions (the error workflow). */
  triggerSourceId: string | null;
  /** The trigger source was declared inline and belongs to the workflow: it is deleted with it. */
  triggerOwned: boolean;
  /** How the trigger was declared. */
  triggerKind: TriggerKind;
  steps: WorkflowStep[];
  respond: "workflow" | "immediately";
  settings: WorkflowSettings;
  /** The owner's global error workflow (a listener of `p_*` / `$errors`). */
  isErrorWorkflow: boolean;
  /** `d_…`, new on every update: what `original_context.deployment_id` names. */
  deploymentId: string;
  createdAt: number;
  updatedAt: number;
  /** The number of its current saved version (see workflow-versions.ts); absent means 1. */
  version?: number;
}

export const TRIGGER_KINDS = ["none", "http", "timer", "source", "component"] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];

/** One step: code (a saved action component), a published action by key, or an action built into Runnel. */
export interface WorkflowStep {
  /** `c_…`: the cellId that errors name. */
  id: string;
  name: string;
  /** The saved component that runs; null for a built-in action. */
  componentId: string | null;
  /** Set when the step names a published action (or a built-in one: `runnel-…`). */
  key: string | null;
  /** Configured props; strings may hold `{{steps.…}}` expressions, evaluated at run time. */
  props: Record<string, unknown>;
  /** The step's own retries, over the workflow's `settings.retries`. */
  retries?: RetryPolicy;
}

/** `retrying`: a step failed and is tried again at `nextAttemptAt`; the run is recorded again when it ends. */
export type RunStatus = "success" | "error" | "exited" | "retrying" | "delayed" | "cancelled";

/** What a run recorded of one step. */
export interface StepRecord {
  id: string;
  name: string;
  /** `pending`: not reached yet by a run that is retrying an earlier step. */
  status: "success" | "error" | "exited" | "skipped" | "pending";
  returnValue: unknown;
  exports: Record<string, unknown>;
  summary: string | null;
  logs: Array<{ stream: "stdout" | "stderr"; text: string; ts: number }>;
  startedAt: number | null;
  durationMs: number;
  /** The step's `$.send.*` calls, in call order, with what became of each (runs recorded before these existed have none). */
  sends: SendRecord[];
  /** True: not run in this run but copied from the failed run it replays from its failed step (see replay-from-step.ts). */
  reused?: boolean;
}

/** The error of a failed run, as the `$errors` event carries it. */
export interface RunError {
  code: RunErrorCode;
  msg: string;
  name: string;
  /** The failed step's id (`c_…`). */
  cellId: string;
  ts: string;
  stack: string;
}

/** A finished run of a workflow, keyed by (workflow, emitter, event): a redelivery never runs it twice. */
export interface WorkflowRun {
  id: string; // run_…
  ownerId: string;
  workflowId: string;
  emitterId: string;
  eventId: string;
  status: RunStatus;
  triggerEvent: unknown;
  steps: StepRecord[];
  error: RunError | null;
  exitReason: string | null;
  /** The `$errors` event this run replays, when it is a replay. */
  replayOf: string | null;
  startedAt: number;
  finishedAt: number;
  durationMs: number;
  /** Executions of the run so far (1, the default: its first); each retry of a step is one more. */
  attempt?: number;
  /** Its failed attempts that were retried, and the last failure (none for a run without retries). */
  attempts?: RunAttempt[];
  /** While `retrying`: when the next attempt is due (epoch ms). */
  nextAttemptAt?: number | null;
  /**
   * While `retrying`: what the next attempt needs to resume at the failed
   * step; kept too by a failed run whose earlier steps sent something, for a
   * replay from its failed step (not shown by the API).
   */
  continuation?: RunContinuation | null;
  /** When `cancelled`: who cancelled it (a user's id, or "cancel_url"); when is `finishedAt`. */
  cancelledBy?: string | null;
  /** The workflow version it ran (see workflow-versions.ts); absent for runs recorded before versions were kept. */
  workflowVersion?: number | null;
}

/**
 * What a run waiting to retry keeps beside its step records, so that the
 * next attempt, in any process, resumes at the failed step: the sends of
 * the steps that succeeded (carried out once the run ends well), and how many
 * times each step was tried.
 */
export interface RunContinuation {
  sends: Array<{ type: string; payload: unknown }>;
  sendPlaces: Array<{ step: number; send: number }>;
  /** Failed tries per step id. */
  tries: Record<string, number>;
  /** While `delayed` ($.flow.delay / $.flow.rerun): where it resumes, and its URLs' token (see run-flow.ts). */
  flow?: FlowContinuation | undefined;
}

/**
 * The catalogue of `error.code` values (docs/workflows.md lists them with what to do).
 * `InternalFailure` is the hosted service's code for a failure of the platform itself.
 */
export const RUN_ERROR_CODES = {
  /** The step threw an Error (or rejected). */
  UserError: "A step threw an error.",
  /** The step threw something that is not an Error (a string, an object). */
  NonErrorThrown: "A step threw a value that is not an Error.",
  /** The run was cancelled while the step ran, and the step never yielded: its runner was stopped (the step's error only; the run is `cancelled`). */
  Cancelled: "A cancelled run's step did not stop, so its runner was stopped.",
  /** The step ran past the workflow's time limit. */
  Timeout: "A step ran past its time limit.",
  /** The step's runner ran out of memory. */
  OutOfMemory: "A step ran out of memory.",
  /** The step called process.exit(). */
  ProcessExit: "A step called process.exit().",
  /** A promise the step started was rejected and nobody caught it. */
  UnhandledRejection: "A step left a promise rejected without a handler.",
  /** The step printed past the log limit. */
  OutputFlood: "A step printed more than the log limit.",
  /** The step's code could not be loaded (a syntax error, a missing export, a failing import). */
  InvalidComponent: "A step's code could not be loaded.",
  /** A prop's expression could not be evaluated, or a step's configuration is wrong. */
  ConfigurationError: "A step's props could not be evaluated.",
  /** An app prop's connected account could not be used: it must be reconnected (or was deleted). */
  AuthError: "A step's connected account must be reconnected.",
  /** A `$.send.*` call could not be carried out after the run. */
  DestinationFailed: "A $.send destination could not be reached.",
  /** The runner process died for another reason, or Runnel itself failed. */
  InternalFailure: "The platform failed while running the step.",
  /** The run was cut off by its process dying, again and again: it is not run any more (replay it once the cause is fixed). */
  RepeatedCrash: "The run took down the process running it too many times.",
} as const;

export type RunErrorCode = keyof typeof RUN_ERROR_CODES;

/** A sandbox error code as a run error code (the two catalogues share most names). */
export function runErrorCodeOf(sandboxCode: string): RunErrorCode {
  if (sandboxCode === "RunnerCrashed") return "InternalFailure";
  return sandboxCode in RUN_ERROR_CODES ? (sandboxCode as RunErrorCode) : "InternalFailure";
}

/**
 * What later steps see of a finished step (`steps.<name>`): its exports, its
 * return value as `$return_value` and its summary as `$summary`.
 */
export function stepResults(step: { exports: Record<string, unknown>; returnValue: unknown; summary: string | null }): Record<string, unknown> {
  // copyOwn, not a spread: this runs for every step of every run (see own-copy.ts).
  const visible: Record<string, unknown> = copyOwn(step.exports);
  visible.$return_value = step.returnValue;
  if (step.summary !== null) visible.$summary = step.summary;
  return visible;
}

/** Runs kept per workflow; older ones are trimmed as new ones are recorded. */
export const RUN_RETENTION = 1_000;
/** How many runs a workflow records between two trims: the listing keeps about RUN_RETENTION (up to this many more). */
export const RUN_TRIM_EVERY = 200;
