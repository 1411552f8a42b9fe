import type { Command } from "commander";
import { basename, resolve } from "node:path";
import type { ApiClient, LiveMessage, SourceView, WorkflowView } from "../../client/api-client.js";
import { isWorkflowFile } from "../deploy-workflow.js";
import { devWorkflow } from "../dev-workflow.js";
import { confirm } from "../prompt.js";
import { parseJsonOption } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { bundleFile, classifyTarget } from "../component-code.js";
import { deploySavedComponent } from "../deploy-source.js";
import { describeError } from "../describe-error.js";
import { listenForInterrupt } from "../interrupt.js";
import { printLines, type Io } from "../output.js";
import { collectProp } from "../props.js";
import { openSession } from "../session.js";
import { printEvent, printLog, sourceLines } from "../source-output.js";
import { watchComponentFile } from "../watch-file.js";
import { serialize } from "../serialize.js";

interface DevOptions {
  event?: string;
  update?: boolean;
  dc?: string;
  name?: string;
  prop?: string[];
}

export function registerDev(program: Command, context: CommandContext): void {
  program
    .command("dev <file>")
    .description(
      "Deploy a source file (or update the one given with --dc), then update it on every save, showing its logs and events; " +
        "or a workflow file (.yaml): update the workflow on every save of it or its step files, showing its runs and what its steps print",
    )
    .option("--event <json>", "workflow files: a test event, sent at the start (the body of a POST to an HTTP trigger); on a terminal Enter or t sends it again")
    .option("--update", "workflow files: replace the workflow of the same name, without asking")
    .option("--dc <id-or-name>", "work on this deployed source instead of deploying a new one")
    .option("--name <name>", "a name for the new source")
    .option("--prop <key=value>", "a prop value for the new source; repeat for more", collectProp)
    .addHelpText("after", "\nCtrl-C stops watching; the source or workflow stays deployed (`runnel delete <name>` removes it).")
    .action(async (file: string, options: DevOptions, command: Command) => {
      if (isWorkflowFile(file)) return developWorkflowFile(context, command, file, options);
      if (options.event !== undefined || options.update) throw new Error("--event and --update are for workflow files (.yaml); send a source an event with `runnel run <source> --event`.");
      const target = await classifyTarget(file);
      if (target.kind !== "file") throw new Error(`dev works on a file on this machine; "${file}" is not one.`);
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const first = await bundleFile(target.path);
      const source = options.dc
        ? await client.updateSource((await client.getSource(options.dc)).id, first.input)
        : await deploySavedComponent(client, context.io, await client.saveComponent(first.input), { name: options.name, propFlags: options.prop ?? [] });
      printLines(context.io, [`${options.dc ? "Updated" : "Deployed"} ${sourceLines(source).join("\n")}`]);
      context.setExitCode(await develop(client, context.io, source, target.path, first.hash));
    });
}

async function developWorkflowFile(context: CommandContext, command: Command, file: string, options: DevOptions): Promise<void> {
  if (options.dc || options.name || options.prop) throw new Error("--dc, --name and --prop are for sources: a workflow file holds its name and its steps' props.");
  const event = options.event === undefined ? undefined : parseJsonOption(options.event, "--event");
  const { client } = await openSession(context.env, globalOptions(command).profile);
  const mayReplace = async (existing: WorkflowView) =>
    Boolean(options.update) || confirm(context.io, `A workflow named ${existing.name_slug} exists already (${existing.id}). Work on it with ${file}?`, "--update");
  context.setExitCode(await devWorkflow(client, context.io, resolve(file), { event, mayReplace }));
}

/** Watches, updates and streams until Ctrl-C (exit 0) or until the source's streams end (exit 1). */
async function develop(client: ApiClient, io: Io, source: SourceView, path: string, deployedHash: string): Promise<number> {
  const interrupt = listenForInterrupt();
  const stop = new AbortController();
  interrupt.signal.addEventListener("abort", () => stop.abort(), { once: true });
  let lastHash = deployedHash;
  let failed = false;
  // Local wall-clock time: these lines answer "did my last save go through?".
  const stamp = () => new Date().toTimeString().slice(0, 8);

  const update = async () => {
    try {
      const bundle = await bundleFile(path);
      if (bundle.hash === lastHash) {
        if (failed) io.stderr.write(`${stamp()} ${basename(path)} is back to the deployed code; nothing to update.\n`);
        failed = false;
        return;
      }
      await client.updateSource(source.id, bundle.input);
      lastHash = bundle.hash;
      failed = false;
      io.stderr.write(`${stamp()} updated ${source.name_slug} from ${basename(path)}\n`);
    } catch (error) {
      // A save with a mistake in it must not end the session: say why, wait for the next save.
      failed = true;
      io.stderr.write(`${stamp()} not updated: ${describeError(error).replace(/^Error: /, "")}\n`);
    }
  };

  let streamsEnded = false;
  const consume = async <T>(messages: AsyncIterable<LiveMessage<T>>, print: (item: T) => void) => {
    try {
      let reason = "the server ended it (was it stopped?).";
      for await (const message of messages) {
        if (message.kind === "closed") {
          reason = message.reason;
          break;
        }
        print(message.item);
      }
      if (!stop.signal.aborted) {
        streamsEnded = true;
        io.stderr.write(`The source's live stream ended: ${reason} Stopping.\n`);
      }
    } catch (error) {
      streamsEnded = true;
      io.stderr.write(`${describeError(error)}\n`);
    }
    stop.abort();
  };

  let watcher: { close(): void } | undefined;
  try {
    // Both streams are open before "Watching" shows, so what happens after it is never missed.
    const [logs, events] = await Promise.all([client.followLogs(source.id, stop.signal), client.followEvents(source.id, stop.signal)]);
    watcher = watchComponentFile(path, serialize(update));
    io.stderr.write(`Watching ${path} for changes; its logs and events show below. Ctrl-C to stop (the source stays deployed).\n`);
    await Promise.all([consume(logs, (log) => printLog(io, log, "log   ")), consume(events, (event) => printEvent(io, event, "event "))]);
  } finally {
    stop.abort();
    watcher?.close();
    interrupt.dispose();
  }
  if (streamsEnded) return 1;
  io.stderr.write(`Stopped. ${source.name_slug} stays deployed; \`runnel delete ${source.name_slug}\` removes it.\n`);
  return 0;
}
