import { cutAtWord } from "../../domain/error-text.js";
import { isRetryable, retryDelayMs } from "../../domain/run-retries.js";
import type { Workflow } from "../../domain/workflows.js";
import type { RunState } from "./run-state.js";

/**
 * A failed run whose failed step has retries (its own `retries`, else the
 * workflow's `settings.retries`): the failure is counted as that step's try,
 * and while tries remain and the error may be retried, the run becomes
 * `retrying`, due again after the backoff. A run without retries is left as
 * it is (no attempt is recorded).
 */
export function settleFailedAttempt(workflow: Workflow, run: RunState, now: number, random: () => number = Math.random): void {
  const error = run.error;
  if (run.status !== "error" || !error) return;
  const step = workflow.steps.find((candidate) => candidate.id === error.cellId);
  const policy = step?.retries ?? workflow.settings.retries;
  if (!step || !policy) return;
  const attempt = (run.tries[step.id] ?? 0) + 1;
  run.tries[step.id] = attempt;
  const willRetry = attempt <= policy.max && isRetryable({ code: error.code, name: error.name, retryable: run.errorRetryable });
  const nextAttemptAt = willRetry ? now + retryDelayMs(policy, attempt, random()) : null;
  // Cut: a run keeps up to 100 of these.
  const tried = { attempt, stepId: step.id, stepName: step.name, code: error.code, msg: cutAtWord(error.msg, 500), failedAt: now, willRetry, nextAttemptAt };
  run.attempts.push(tried);
  run.failedAttempt = tried;
  if (!willRetry) return;
  run.status = "retrying";
  run.nextAttemptAt = nextAttemptAt;
}
