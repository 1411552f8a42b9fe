import { RETRY_WINDOW_MS } from "./run-retries.js";

/**
 * `$.flow.delay(ms)` and `$.flow.rerun(delayMs, context, maxReruns)`
 * (issue 19): a step asks for its run to wait. The run is recorded
 * `delayed` when the step ends, its delivery goes back to the queue due at
 * the end of the wait, and it resumes then, in any process: with the next
 * step (a delay) or with the same step again (a rerun).
 */
export type FlowRequest = { kind: "delay"; ms: number } | { kind: "rerun"; ms: number; context: unknown; maxReruns: number } | { kind: "suspend"; ms: number };

/**
 * The longest wait: the window a waiting delivery is kept in (the same as a
 * retry's: BullMQ keeps a job 7 days). The hosted service allows a year; a
 * longer wait here fails the step, naming the limit.
 */
export const MAX_FLOW_DELAY_MS = RETRY_WINDOW_MS;
/** `$.flow.suspend`'s default timeout: a day. */
export const DEFAULT_SUSPEND_TIMEOUT_MS = 86_400_000;
/** `$.flow.rerun`'s default `maxReruns`, as the hosted service has it. */
export const DEFAULT_MAX_RERUNS = 10;
/** The most reruns a step may ask for. */
export const MAX_RERUNS_LIMIT = 10_000;

/** The statuses of a run waiting in the queue with its row as its continuation (a later attempt replaces the row). */
export const WAITING_RUN_STATUSES = ["retrying", "delayed"] as const;

/** Whether a run of this status waits in the queue (retrying, delayed): it keeps its delivery, and has not ended. */
export function isWaitingStatus(status: string): boolean {
  return (WAITING_RUN_STATUSES as readonly string[]).includes(status);
}

/** Statuses a person may cancel: waiting ones (a running run is cancelled through the process running it). */
export const CANCELLABLE_RUN_STATUSES: readonly string[] = WAITING_RUN_STATUSES;
// An event waiting at a workflow's gate (settings.concurrency) has no run yet: it is cancelled by its event id
// (POST /v1/workflows/:id/waiting/:event_id/cancel, WorkflowsService.cancelWaiting), which also frees its place.

/**
 * What a delayed run keeps (in its continuation) to resume: the step it
 * resumes at, the token of its resume and cancel URLs, and, for a rerun,
 * `$.context.run` of the step's next execution.
 */
export interface FlowContinuation {
  /** Position of the step the run resumes at. */
  resumeAt: number;
  token: string;
  /** For a rerun: the executions of the step so far (its next one sees one more), what it passed, and its limit. */
  rerun?: { runs: number; context: unknown; maxReruns: number };
  /** `$.flow.suspend`: the run waits for its resume URL; reaching its due time without it is a timeout (an error). */
  suspended?: true;
  /** The request to the resume URL that resumed the run early, for `$.context.run.callback_request`. */
  callbackRequest?: { method: string; headers: Record<string, string>; body: unknown };
}

/** Why a delay cannot be taken (its value named), or null when it can. */
export function delayProblem(ms: unknown, what: string): string | null {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return `${what}: the delay must be a number of milliseconds, 0 or more; got ${describe(ms)}.`;
  if (ms > MAX_FLOW_DELAY_MS) return `${what}: a delay of ${ms} ms is past the longest wait this server keeps a run for (${MAX_FLOW_DELAY_MS} ms, 7 days).`;
  return null;
}

/** Why a rerun's limit is not one, or null. */
export function maxRerunsProblem(max: unknown): string | null {
  if (typeof max !== "number" || !Number.isInteger(max) || max < 0 || max > MAX_RERUNS_LIMIT) return `$.flow.rerun(delayMs, context, maxReruns): maxReruns must be a whole number from 0 to ${MAX_RERUNS_LIMIT}; got ${describe(max)}.`;
  return null;
}

/** The capability URLs of a delayed run: anyone holding them may resume or cancel it, nothing else. */
export function flowUrls(baseUrl: string, ownerId: string, runId: string, token: string): { resume_url: string; cancel_url: string } {
  const base = `${baseUrl}/flow/${encodeURIComponent(ownerId)}/${encodeURIComponent(runId)}/${token}`;
  return { resume_url: `${base}/resume`, cancel_url: `${base}/cancel` };
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  return value === null ? "null" : typeof value;
}
