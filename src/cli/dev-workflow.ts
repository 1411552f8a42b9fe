import { createHash } from "node:crypto";
import { basename, dirname, resolve } from "node:path";
import type { ApiClient, RunView, WorkflowView } from "../client/api-client.js";
import { deployWorkflow, loadWorkflowFile, type MayReplace } from "./deploy-workflow.js";
import { describeError } from "./describe-error.js";
import { listenForInterrupt } from "./interrupt.js";
import { printLines, type Io } from "./output.js";
import { watchComponentFile } from "./watch-file.js";
import { WorkflowFileError } from "./workflow-file.js";
import { followRuns, printRunLogs } from "./workflow-feed.js";
import { workflowLines } from "./workflow-output.js";
import { serialize } from "./serialize.js";

export interface DevWorkflowOptions {
  /** The test event, parsed; sent at the start and again on Enter or `t` on a terminal. */
  event?: unknown;
  mayReplace: MayReplace;
}

/** What the workflow file deploys, to tell a save that changes it from one that does not. */
function hashOf(loaded: Awaited<ReturnType<typeof loadWorkflowFile>>): string {
  const declared = loaded.file.subscriptions.map(({ emitter, eventName }) => ({ emitter, eventName }));
  return createHash("sha256").update(JSON.stringify([loaded.body, declared])).digest("hex");
}

/**
 * `runnel dev <workflow>.yaml`: deploys the file, then updates the workflow
 * on every save of it or of its step files, printing each run with what its
 * steps printed, until Ctrl-C (exit 0; the workflow stays deployed).
 */
export async function devWorkflow(client: ApiClient, io: Io, path: string, options: DevWorkflowOptions): Promise<number> {
  const shownAs = basename(path);
  let loaded;
  let deployed;
  try {
    loaded = await loadWorkflowFile(path, shownAs);
    deployed = await deployWorkflow(client, loaded, options.mayReplace);
  } catch (error) {
    if (!(error instanceof WorkflowFileError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 1;
  }
  if (!deployed) {
    io.stderr.write("Nothing was deployed. To keep both, give the workflow in the file another name.\n");
    return 1;
  }
  let workflow: WorkflowView = deployed.workflow;
  printLines(io, [`${deployed.created ? "Created" : "Updated"} workflow ${workflowLines(workflow).join("\n")}`]);

  const interrupt = listenForInterrupt();
  const stop = new AbortController();
  interrupt.signal.addEventListener("abort", () => stop.abort(), { once: true });
  const stamp = () => new Date().toTimeString().slice(0, 8);
  let lastHash = hashOf(loaded);
  let failed = false;
  let watchers: Array<{ close(): void }> = [];
  let watched = "";

  // The YAML file, and each step file with its folder (helpers next to it are caught too); again when the files change.
  const watchAll = (codePaths: string[]) => {
    const files = [path, ...new Set(codePaths)];
    if (files.join("\n") === watched) return;
    watchers.forEach((watcher) => watcher.close());
    watchers = files.map((file) => watchComponentFile(file, onChange));
    watched = files.join("\n");
  };
  const codePathsOf = (current: typeof loaded) => current.file.codeFiles.map((ref) => resolve(dirname(path), ref.path));

  const update = async () => {
    try {
      const next = await loadWorkflowFile(path, shownAs);
      watchAll(codePathsOf(next));
      const hash = hashOf(next);
      if (hash === lastHash) {
        if (failed) io.stderr.write(`${stamp()} ${shownAs} is back to the deployed workflow; nothing to update.\n`);
        failed = false;
        return;
      }
      // The file now names this workflow, whatever its name has become.
      const result = await deployWorkflow(client, { file: { ...next.file, id: workflow.id }, body: next.body }, async () => true);
      if (!result) return;
      workflow = result.workflow;
      lastHash = hash;
      failed = false;
      io.stderr.write(`${stamp()} updated ${workflow.name_slug} from ${shownAs}\n`);
      for (const subscription of result.subscribed) io.stderr.write(`${stamp()} subscribed it to ${subscription.emitter_id} (${subscription.event_name || "default channel"})\n`);
    } catch (error) {
      // A save with a mistake in it must not end the session: say why, wait for the next save.
      failed = true;
      const text = error instanceof WorkflowFileError ? error.message : describeError(error).replace(/^Error: /, "");
      io.stderr.write(`${stamp()} not updated: ${text}\n`);
    }
  };

  const onChange = serialize(update);

  const sendTestEvent = async () => {
    if (options.event === undefined) return;
    try {
      io.stderr.write(`${stamp()} ${await sendEvent(client, workflow, options.event)}\n`);
    } catch (error) {
      io.stderr.write(`${stamp()} test event not sent: ${describeError(error).replace(/^Error: /, "")}\n`);
    }
  };

  const keys = listenForKeys(io, options.event === undefined ? null : () => void sendTestEvent());
  let ended = false;
  try {
    const runs = await followRuns(client, workflow.id, stop.signal);
    watchAll(codePathsOf(loaded));
    const again = options.event !== undefined && keys ? " Enter or t sends the test event again." : "";
    io.stderr.write(`Watching ${shownAs} and its step files; each run and what its steps printed show below.${again} Ctrl-C to stop (the workflow stays deployed).\n`);
    void sendTestEvent();
    try {
      for await (const message of runs) if (message.kind === "item") printRunLogs(io, message.item as RunView, "run  ");
    } catch (error) {
      ended = true;
      io.stderr.write(`${describeError(error)}\n`);
    }
  } finally {
    stop.abort();
    watchers.forEach((watcher) => watcher.close());
    keys?.close();
    interrupt.dispose();
  }
  if (ended) return 1;
  io.stderr.write(`Stopped. ${workflow.name_slug} stays deployed; \`runnel delete ${workflow.name_slug}\` removes it.\n`);
  return 0;
}

/**
 * Sends the test event the way the workflow's trigger takes one: POSTed as
 * JSON to its HTTP endpoint (the event's body), or emitted by running its
 * trigger source with it. Returns what was done, for the log line.
 */
async function sendEvent(client: ApiClient, workflow: WorkflowView, event: unknown): Promise<string> {
  const { endpoint_url: url, source_id: sourceId } = workflow.trigger;
  if (url) {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) });
    await response.arrayBuffer();
    return `sent the test event to ${url} (HTTP ${response.status})`;
  }
  if (sourceId) {
    await client.runSource(sourceId, event);
    return `sent the test event through the trigger ${sourceId}`;
  }
  throw new Error(`${workflow.name_slug} has no trigger to send it to (it runs on what it subscribes to).`);
}

/** On a terminal: Enter or `t` calls `onSend`, Ctrl-C stops as the signal does. Null when stdin is no terminal or there is nothing to send. */
function listenForKeys(io: Io, onSend: (() => void) | null): { close(): void } | null {
  const stdin = io.stdin as NodeJS.ReadStream;
  if (!onSend || !stdin.isTTY || typeof stdin.setRawMode !== "function") return null;
  stdin.setRawMode(true);
  stdin.resume();
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    if (text.includes("\u0003")) return void process.kill(process.pid, "SIGINT");
    if (/[\r\nt]/.test(text)) onSend();
  };
  stdin.on("data", onData);
  return {
    close() {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
    },
  };
}
