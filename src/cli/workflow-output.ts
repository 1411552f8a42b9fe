import type { ErrorSummaryView, RunView, WorkflowView } from "../client/api-client.js";
import { cutAtWord, errorHeadline } from "../domain/error-text.js";
import { formatTime } from "./output.js";

/** A workflow as a short block: the first line names it, then its trigger and steps with their ids. */
export function workflowLines(workflow: WorkflowView, options: { detail?: boolean } = {}): string[] {
  const lines = [`${workflow.name_slug} (${workflow.id})`];
  if (options.detail) lines.push(`  name:     ${workflow.name}`);
  lines.push(`  active:   ${workflow.active ? "yes" : "no (its trigger does not run it)"}`);
  lines.push(`  trigger:  ${triggerText(workflow)}`);
  if (workflow.trigger.endpoint_url) lines.push(`  endpoint: ${workflow.trigger.endpoint_url}`);
  if (options.detail) {
    lines.push(`  respond:  ${workflow.respond === "workflow" ? "workflow (HTTP callers wait for $.respond)" : "immediately"}`);
    lines.push(`  errors:   ${workflow.settings.error_notifications ? "sent to the global error workflow" : "listed only (error_notifications: false)"}, ${workflow.settings.error_retention} kept`);
  }
  if (workflow.steps.length === 0) lines.push("  steps:    none");
  else {
    lines.push("  steps:");
    workflow.steps.forEach((step, index) => {
      const what = step.key ? `  key ${step.key}` : "";
      lines.push(`    ${index + 1}. ${step.name} (${step.id})${what}`);
      if (options.detail) for (const [name, value] of Object.entries(step.props)) lines.push(`         ${name} = ${JSON.stringify(value)}`);
    });
  }
  if (options.detail) lines.push(`  updated:  ${formatTime(workflow.updated_at)}`);
  return lines;
}

/** The trigger in a few words: `http`, `timer (dc_…)`, `source dc_…`, `none (runs on subscriptions)`. */
export function triggerText(workflow: WorkflowView): string {
  const { type, source_id: sourceId } = workflow.trigger;
  if (type === "none") return "none (runs on what it subscribes to)";
  if (type === "source") return `source ${sourceId ?? "-"}`;
  return sourceId ? `${type} (${sourceId})` : type;
}

export function runRow(run: RunView): string[] {
  return [run.id, formatMs(run.started_at_ms), statusText(run), formatDuration(run.duration_ms), run.error?.code ?? run.exit_reason ?? "-", run.replay_of ?? "-"];
}

/** The status, with the attempt when there were several, and when a retrying run tries again: `retrying (attempt 2, next at …)`. */
function statusText(run: RunView): string {
  const attempt = run.attempt ?? 1;
  if (run.status === "retrying") return `retrying (attempt ${attempt}, next at ${formatMs(run.next_attempt_at_ms ?? null)})`;
  if (run.status === "delayed") return `delayed (resumes at ${formatMs(run.next_attempt_at_ms ?? null)})`;
  if (run.status === "cancelled") return `cancelled (by ${run.cancelled_by ?? "-"})`;
  return attempt > 1 ? `${run.status} (attempt ${attempt})` : run.status;
}

export const RUN_HEAD = ["run", "time", "status", "duration", "error / exit", "replay of"];

/** One run in detail: each step's status and time, summary, return value (cut), exports, sends and what became of them, logs, and the error with the head of its stack. */
export function runLines(run: RunView, options: { valueChars?: number; stackLines?: number; workflowSlug?: string } = {}): string[] {
  const valueChars = options.valueChars ?? 300;
  const stackLines = options.stackLines ?? 6;
  const lines = [
    `${run.id}  ${run.status}  ${formatDuration(run.duration_ms)}`,
    `  workflow:  ${options.workflowSlug ? `${options.workflowSlug} (${run.workflow_id})` : run.workflow_id}`,
    `  started:   ${formatMs(run.started_at_ms)}`,
    `  trigger:   event ${run.trigger.event_id} from ${run.trigger.emitter_id}`,
  ];
  if (run.replay_of) lines.push(`  replay of: ${run.replay_of}${run.steps.some((step) => step.reused) ? " (from its failed step)" : ""}`);
  if (run.workflow_version !== null && run.workflow_version !== undefined) lines.push(`  version:   ${run.workflow_version}`);
  if (run.exit_reason) lines.push(`  exited:    ${run.exit_reason}`);
  if ((run.attempt ?? 1) > 1 || (run.attempts ?? []).length > 0) lines.push(`  attempt:   ${run.attempt ?? 1}`);
  if (run.status === "retrying") lines.push(`  next try:  ${formatMs(run.next_attempt_at_ms ?? null)} (a step failed; the run resumes at it then)`);
  if (run.status === "delayed") lines.push(`  resumes:   ${formatMs(run.next_attempt_at_ms ?? null)} ($.flow.delay or $.flow.rerun; cancel with \`runnel runs cancel ${run.id}\`)`);
  if (run.status === "cancelled") lines.push(`  cancelled: at ${formatMs(run.finished_at_ms)} by ${run.cancelled_by ?? "-"}`);
  // Each failed try of a step with retries: which, why, and what followed.
  for (const tried of run.attempts ?? []) {
    const then = tried.will_retry ? `retried at ${formatMs(tried.next_attempt_at_ms)}` : "not retried";
    lines.push(`  failed:    ${tried.step_name} try ${tried.attempt} at ${formatMs(tried.failed_at_ms)}: ${tried.code}: ${cut(tried.msg, 120)} (${then})`);
  }
  lines.push("steps:");
  run.steps.forEach((step, index) => {
    // A step reused by a replay from a failed step did not run in this run: its duration is the failed run's.
    const reused = step.reused ? "  (reused from the failed run, not run again)" : "";
    lines.push(`  ${index + 1}. ${step.name} (${step.id})  ${step.status}  ${formatDuration(step.duration_ms)}${reused}`);
    if (step.summary) lines.push(`     summary: ${step.summary}`);
    if (step.$return_value !== undefined && step.$return_value !== null) lines.push(`     return:  ${cut(JSON.stringify(step.$return_value), valueChars)}`);
    const exports = Object.entries(step.exports).filter(([name]) => name !== "$summary" && name !== "$return_value");
    for (const [name, value] of exports) lines.push(`     export:  ${name} = ${cut(JSON.stringify(value), valueChars)}`);
    for (const send of step.sends ?? []) {
      lines.push(`     send:    $.send.${send.destination} → ${send.target}  ${send.status.replace("_", " ")}${send.detail ? ` (${send.detail})` : ""}`);
      lines.push(`              ${cut(send.summary, valueChars)}`);
    }
    if (step.logs.length > 0) {
      lines.push("     logs:");
      for (const log of step.logs) {
        const mark = log.stream === "stderr" ? " stderr" : "";
        lines.push(`       ${new Date(log.ts).toISOString()}${mark}  ${log.text.replace(/\n$/, "").replace(/\n/g, "\n         ")}`);
      }
    }
    if (run.error && run.error.cellId === step.id) lines.push(...errorLines(run.error, stackLines));
  });
  // An error outside any recorded step (a destination after the run, the platform).
  if (run.error && !run.steps.some((step) => step.id === run.error?.cellId)) lines.push(...errorLines(run.error, stackLines));
  return lines;
}

function errorLines(error: NonNullable<RunView["error"]>, stackLines: number): string[] {
  const lines = [`     error:   ${error.code}: ${errorHeadline(error.name, error.msg)}`];
  // The stack's first line repeats the message; its frames say where.
  const frames = error.stack
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("at "));
  for (const frame of frames.slice(0, stackLines)) lines.push(`       ${frame}`);
  if (frames.length > stackLines) lines.push(`       … ${frames.length - stackLines} more`);
  return lines;
}

export const ERROR_HEAD = ["error", "time", "code", "step", "message"];

/** One `$errors` item as a table row; the step is its name with its cellId beside it, or the cellId alone when the workflow no longer has it. */
export function errorRow(error: ErrorSummaryView, stepNames: ReadonlyMap<string, string>): string[] {
  const detail = error.event?.error;
  const cellId = detail?.cellId ?? "-";
  const name = stepNames.get(cellId);
  return [error.id, formatMs(error.indexed_at_ms), detail?.code ?? "-", name ? `${name} (${cellId})` : cellId, cut(detail?.msg ?? "-", 80)];
}

export function formatMs(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString();
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** One line of at most about `max` characters, cut at a word, saying how long the whole was. */
function cut(text: string, max: number): string {
  const oneLine = text.replace(/\s*\n\s*/g, " ");
  return oneLine.length <= max ? oneLine : `${cutAtWord(oneLine, max)} (${oneLine.length} characters)`;
}
