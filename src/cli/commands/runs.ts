import type { Command } from "commander";
import { parseCount } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { findWorkflow } from "../named-target.js";
import { printJson, printLines, printTable } from "../output.js";
import { openSession } from "../session.js";
import { RUN_HEAD, runLines, runRow } from "../workflow-output.js";
import type { WaitingEventView } from "../../client/api-client.js";

export function registerRuns(program: Command, context: CommandContext): void {
  const runs = program
    .command("runs")
    .description("`runnel runs <workflow-or-run>`: a workflow's latest runs, or one run in detail; `runnel runs cancel <run id>` cancels a delayed, retrying or running run; `runnel runs waiting <workflow>` lists the events waiting at its gate");

  // A subcommand (the default one), as `runnel errors` has it, so that `runs cancel` is a command of its own.
  runs
    .command("show <workflow-or-run>", { isDefault: true })
    .description("A workflow's latest runs, newest first (by its id or name); or one run in detail (by its run_… id): each step's status, time, return value, exports, logs and error")
    .option("-n, --count <count>", "how many of the latest runs (1 to 100)", "20")
    .option("--json", "print JSON")
    .action(async (target: string, options: { count: string; json?: boolean }, command: Command) => {
      const limit = parseCount(options.count, "-n");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      if (target.startsWith("run_")) {
        const run = await client.getRun(target);
        if (options.json) return printJson(context.io, run);
        // Named as its owner knows it; a workflow deleted since is shown by its id.
        const workflow = await client.getWorkflow(run.workflow_id).catch(() => null);
        return printLines(context.io, runLines(run, workflow ? { workflowSlug: workflow.name_slug } : {}));
      }
      const workflow = await findWorkflow(client, target);
      const page = await client.listRuns(workflow.id, { limit });
      if (options.json) return printJson(context.io, page.data);
      if (page.data.length === 0) return void context.io.stderr.write(`No runs of ${workflow.name_slug} yet.\n`);
      printTable(context.io, RUN_HEAD, page.data.map(runRow));
      context.io.stderr.write(`See one in detail with \`runnel runs <run id>\`.\n`);
    });

  runs
    .command("waiting <workflow>")
    .description("The events waiting at a workflow's gate (settings.concurrency) for their turn, in line order: each line's next first")
    .option("-n, --count <count>", "how many (1 to 100)", "20")
    .option("--json", "print JSON")
    .action(async (target: string, options: { count: string; json?: boolean }, command: Command) => {
      const limit = parseCount(options.count, "-n");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const workflow = await findWorkflow(client, target);
      const page = await client.listWaiting(workflow.id, { limit });
      if (options.json) return printJson(context.io, page.data);
      if (page.data.length === 0) return void context.io.stderr.write(`Nothing waits at the gate of ${workflow.name_slug}.\n`);
      printTable(context.io, WAITING_HEAD, page.data.map(waitingRow));
      const more = page.page_info.total_count - page.data.length;
      if (more > 0) context.io.stderr.write(`And ${more} more (show more with -n, up to 100).\n`);
      context.io.stderr.write(`Cancel one before it runs with \`runnel runs cancel --waiting <event id> --workflow ${workflow.name_slug}\`.\n`);
    });

  runs
    .command("cancel [run-id]")
    .description(
      "Cancel a run: a delayed or retrying one never resumes (recorded cancelled, its pending sends dropped, no $errors event); a running one stops before its next step. With --waiting <event id> --workflow <workflow>: an event waiting at the workflow's gate never runs (see `runnel runs waiting`)",
    )
    .option("--waiting <event-id>", "cancel this event waiting at the gate of --workflow instead of a run")
    .option("--workflow <workflow>", "the workflow (id or name) the --waiting event waits for")
    .option("--json", "print JSON")
    .action(async (runId: string | undefined, options: { waiting?: string; workflow?: string; json?: boolean }, command: Command) => {
      if (options.waiting !== undefined) return cancelWaiting(runId, options as { waiting: string; workflow?: string; json?: boolean }, command);
      if (runId === undefined) throw new Error("Give the run to cancel (`runnel runs cancel <run id>`), or an event waiting at a workflow's gate (`runnel runs cancel --waiting <event id> --workflow <workflow>`).");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const answer = await client.cancelRun(runId);
      if (options.json) return printJson(context.io, answer);
      if ("run_id" in answer) return printLines(context.io, [`${runId} is running: it stops before its next step and is recorded cancelled. Check with \`runnel runs ${runId}\`.`]);
      printLines(context.io, [`${runId} cancelled: it will not resume.`]);
    });

  async function cancelWaiting(runId: string | undefined, options: { waiting: string; workflow?: string; json?: boolean }, command: Command): Promise<void> {
    if (runId !== undefined) throw new Error(`Give either a run id or --waiting, not both: \`runnel runs cancel ${runId}\` cancels a run, \`runnel runs cancel --waiting <event id> --workflow <workflow>\` a waiting event.`);
    if (!options.workflow) throw new Error(`--waiting needs --workflow: the workflow (id or name) ${options.waiting} waits for, as in \`runnel runs cancel --waiting ${options.waiting} --workflow <workflow>\`.`);
    const { client } = await openSession(context.env, globalOptions(command).profile);
    const workflow = await findWorkflow(client, options.workflow);
    const run = await client.cancelWaiting(workflow.id, options.waiting);
    if (options.json) return printJson(context.io, run);
    printLines(context.io, [`${options.waiting} cancelled: it left the line of ${workflow.name_slug} and will not run (its run ${run.id} is recorded cancelled).`]);
  }
}

const WAITING_HEAD = ["position", "event", "key", "waiting since"];

function waitingRow(item: WaitingEventView): string[] {
  return [String(item.position), item.event_id, item.key === null ? "-" : JSON.stringify(item.key), new Date(item.waiting_since_ms).toISOString()];
}
