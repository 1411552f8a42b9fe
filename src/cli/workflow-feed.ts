import type { ApiClient, LiveMessage, RunView } from "../client/api-client.js";
import type { Io } from "./output.js";
import { formatDuration } from "./workflow-output.js";

/** How often `-f` asks for new runs: the API has no live stream of runs, so they are polled. */
export const RUN_POLL_MS = 1000;

/**
 * A workflow's finished runs as a live stream, by polling its latest runs.
 * Resolves once the runs already there are known, so only the ones after
 * that are yielded, oldest first. Ends when `signal` aborts.
 */
export async function followRuns(client: ApiClient, workflowId: string, signal: AbortSignal, pollMs = RUN_POLL_MS): Promise<AsyncIterable<LiveMessage<RunView>>> {
  const seen = new Set((await client.listRuns(workflowId, { limit: 100 })).data.map(attemptKey));
  return (async function* () {
    while (!signal.aborted) {
      await sleep(pollMs, signal);
      if (signal.aborted) return;
      const runs = (await client.listRuns(workflowId, { limit: 100 })).data.filter((run) => !seen.has(attemptKey(run))).reverse();
      for (const run of runs) {
        seen.add(attemptKey(run));
        yield { kind: "item" as const, item: run, channel: "run" };
      }
    }
  })();
}

/** A run retrying a step is the same run at each attempt: each attempt, and its end, is shown once. */
function attemptKey(run: RunView): string {
  return `${run.id} ${run.attempt ?? 1} ${run.status}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** One run's header line: time, id, status, duration, and the error or exit. */
function runHeader(run: RunView, prefix: string): string {
  const time = new Date(run.started_at_ms ?? Date.now()).toISOString();
  const why = run.error ? `  ${run.error.code}: ${run.error.msg.split("\n")[0]}` : run.exit_reason ? `  exited: ${run.exit_reason}` : "";
  return `${prefix}${time}  ${run.id}  ${run.status}  ${formatDuration(run.duration_ms)}${why}`;
}

/** A run and what its steps printed, each line under the step's name. */
export function printRunLogs(io: Io, run: RunView, prefix = ""): void {
  const lines = [runHeader(run, prefix)];
  for (const step of run.steps) {
    for (const log of step.logs) {
      const mark = log.stream === "stderr" ? " stderr" : "";
      lines.push(`${prefix}  ${step.name}${mark}: ${log.text.replace(/\n$/, "").replace(/\n/g, `\n${prefix}    `)}`);
    }
  }
  io.stdout.write(`${lines.join("\n")}\n`);
}

/** The event a run was started by: a header line (time, event id, where from, the run and its status), then its body as one line of JSON. */
export function printRunEvent(io: Io, run: RunView, prefix = ""): void {
  const time = new Date(run.started_at_ms ?? Date.now()).toISOString();
  const replay = run.replay_of ? `, a replay of ${run.replay_of}` : "";
  io.stdout.write(`${prefix}${time}  ${run.trigger.event_id} from ${run.trigger.emitter_id}  → ${run.id} ${run.status}${replay}\n${prefix}  ${JSON.stringify(run.trigger.event)}\n`);
}
