import type { WorkflowRun } from "../../domain/workflows.js";
import type { RunState } from "./run-state.js";

/**
 * A run a person cancelled while it ran (RunExecutor.cancelInProgress): at
 * the next step boundary it ends `cancelled`, whatever its steps did so far:
 * no `$errors` event, no emits, no sends, no store writes (its record keeps
 * the steps that ran, for the record, and no error but that of a step whose
 * runner was stopped because it never yielded: `Cancelled`).
 */
export function stopIfCancelled(run: RunState): void {
  if (!run.cancel || run.status === "cancelled") return;
  run.status = "cancelled";
  // A step stopped with its runner (it never yielded) stays the run's error: which step, and why it shows failed.
  if (run.error?.code !== "Cancelled") run.error = null;
  run.nextAttemptAt = null;
}

/**
 * A delivery of a run that was cancelled while it waited (delayed or
 * retrying), claimed again: nothing runs; its record is the cancelled row
 * (the executor's record of it is refused by the store, the row being no
 * longer a waiting one), and its delivery is settled.
 */
export function settleCancelledWait(run: RunState, row: WorkflowRun): void {
  run.id = row.id;
  run.startedAt = row.startedAt;
  run.attempt = (row.attempt ?? 1) + 1;
  run.cancel = { by: row.cancelledBy ?? "unknown", at: row.finishedAt };
  run.status = "cancelled";
}
