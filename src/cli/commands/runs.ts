import type { Command } from "commander";
import { parseCount } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { findWorkflow } from "../named-target.js";
import { printJson, printLines, printTable } from "../output.js";
import { openSession } from "../session.js";
import { RUN_HEAD, runLines, runRow } from "../workflow-output.js";

export function registerRuns(program: Command, context: CommandContext): void {
  const runs = program
    .command("runs")
    .description("`runnel runs <workflow-or-run>`: a workflow's latest runs, or one run in detail; `runnel runs cancel <run id>` cancels a delayed, retrying or running run");

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
    .command("cancel <run-id>")
    .description("Cancel a run: a delayed or retrying one never resumes (recorded cancelled, its pending sends dropped, no $errors event); a running one stops before its next step")
    .option("--json", "print JSON")
    .action(async (runId: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const answer = await client.cancelRun(runId);
      if (options.json) return printJson(context.io, answer);
      if ("run_id" in answer) return printLines(context.io, [`${runId} is running: it stops before its next step and is recorded cancelled. Check with \`runnel runs ${runId}\`.`]);
      printLines(context.io, [`${runId} cancelled: it will not resume.`]);
    });
}
