import { randomBytes } from "node:crypto";
import { delayProblem, maxRerunsProblem, type FlowContinuation, type FlowRequest } from "../../domain/run-flow.js";
import { stepResults, type WorkflowRun, type WorkflowStep } from "../../domain/workflows.js";
import type { StepSend } from "../../sandbox/protocol.js";
import { failRun, type RunState } from "./run-state.js";

/**
 * `$.flow.delay` and `$.flow.rerun` on the host (issue 19): a step that asked
 * for a wait makes its run `delayed` (recorded with a continuation, like a
 * run waiting to retry), due again at the end of the wait; the next claim of
 * its delivery resumes it with the next step (a delay) or the same step (a
 * rerun). The runner checked the values; its word is not trusted, so they
 * are checked again here.
 */

const TOKEN_BYTES = 24;
/** Random bytes for this many tokens at a time: every run gets one, and one call for each cost 2-4 us of a run's ~110. */
const TOKENS_PER_DRAW = 512;
let drawn = Buffer.alloc(0);
let drawnAt = 0;

/** The secret of a run's resume and cancel URLs: 192 random bits, kept in its continuation while it waits. */
export function newFlowToken(): string {
  if (drawnAt + TOKEN_BYTES > drawn.length) {
    drawn = randomBytes(TOKEN_BYTES * TOKENS_PER_DRAW);
    drawnAt = 0;
  }
  const token = drawn.toString("base64url", drawnAt, drawnAt + TOKEN_BYTES);
  drawnAt += TOKEN_BYTES;
  return token;
}

/**
 * `$.context.run` for the first step of a call starting at `from`: a step a
 * rerun resumes at sees its executions so far and what the rerun passed; a
 * step a resume URL resumed, the request. A run that never waited keeps the
 * meaning it had: the executions of its delivery (2 for a run redone after a
 * crash, or retried).
 */
export function contextRunOf(run: RunState, from: number): { runs: number; context?: unknown; callback_request?: unknown } {
  const flow = run.flow;
  if (!flow) return { runs: run.delivery.attempts };
  if (flow.resumeAt !== from) return { runs: 1 };
  const resumed = flow.callbackRequest ? { callback_request: flow.callbackRequest } : {};
  if (!flow.rerun) return { runs: 1, ...resumed };
  return { runs: flow.rerun.runs + 1, context: flow.rerun.context, ...resumed };
}

/**
 * The step at `index` ended well and asked for a wait: the run becomes
 * `delayed`, due at `now + ms`. A rerun past its limit (or a value the runner
 * should have refused) fails the step instead, saying why.
 */
export function applyFlowRequest(run: RunState, step: WorkflowStep, index: number, request: FlowRequest, now: number): void {
  const what = request.kind === "delay" ? "$.flow.delay(ms)" : request.kind === "suspend" ? "$.flow.suspend(timeoutMs)" : "$.flow.rerun(delayMs, context, maxReruns)";
  const problem = delayProblem(request.ms, what) ?? (request.kind === "rerun" ? maxRerunsProblem(request.maxReruns) : null);
  const fail = (message: string) => failRun(run, step, { code: "UserError", name: "FlowError", message }, now);
  if (problem) return fail(problem);
  const token = run.flow?.token ?? run.flowToken;
  if (request.kind === "rerun") {
    // This execution is the step's `runs`-th; it may ask for another while its reruns stay within the limit.
    const runs = contextRunOf(run, index).runs;
    if (runs > request.maxReruns) {
      return fail(`Step "${step.name}" asked to rerun after ${runs} executions, past its limit of ${request.maxReruns} reruns ($.flow.rerun's maxReruns): it fails here. Raise maxReruns, or stop calling $.flow.rerun once the work is done.`);
    }
    run.flow = { resumeAt: index, token, rerun: { runs, context: request.context, maxReruns: request.maxReruns } };
  } else {
    run.flow = { resumeAt: index + 1, token, ...(request.kind === "suspend" ? { suspended: true as const } : {}) };
  }
  run.status = "delayed";
  run.nextAttemptAt = now + Math.round(request.ms);
}

/**
 * A `delayed` run, resumed in this new execution: its id, start and
 * attempts, and the records, results and sends of the steps before the one
 * it resumes at (those of the step a rerun runs again are dropped: only its
 * last execution counts). A workflow whose earlier steps changed since runs
 * again from its first step.
 */
export function resumeDelayedRun(run: RunState, waiting: WorkflowRun, steps: WorkflowStep[]): void {
  const continuation = waiting.continuation;
  const flow = continuation?.flow;
  if (!continuation || !flow) return;
  run.flow = flow;
  run.tries = { ...continuation.tries };
  if (flow.resumeAt > steps.length) return;
  const kept = waiting.steps.slice(0, flow.resumeAt);
  if (kept.length < flow.resumeAt || kept.some((record, index) => record.id !== steps[index]!.id || (record.status !== "success" && record.status !== "exited"))) {
    run.flow = { resumeAt: 0, token: flow.token };
    return;
  }
  for (const record of kept) {
    run.records.push(record);
    run.scope[record.name] = stepResults(record);
  }
  const sends = continuation.sends as StepSend[];
  const places = continuation.sendPlaces;
  // A rerun's step runs again: what its last execution sent is not kept.
  const keep = places.map((place) => place.step < flow.resumeAt);
  run.sends = sends.filter((_, index) => keep[index]);
  run.sendPlaces = places.filter((_, index) => keep[index]);
  run.resumeAt = flow.resumeAt;
  // Suspended, and its time came before its resume URL was called: the suspending step timed out.
  if (flow.suspended && !flow.callbackRequest) {
    const suspending = steps[flow.resumeAt - 1]!;
    const message = `Step "${suspending.name}" suspended the run ($.flow.suspend) and its resume URL was not called before the timeout. Call the resume URL sooner, or give $.flow.suspend a longer timeout.`;
    failRun(run, suspending, { code: "Timeout", name: "SuspendTimeout", message }, waiting.nextAttemptAt ?? waiting.finishedAt);
  }
}

/** What a delayed run keeps to resume (see FlowContinuation). */
export function flowOf(run: RunState): FlowContinuation | undefined {
  return run.status === "delayed" && run.flow ? run.flow : undefined;
}
