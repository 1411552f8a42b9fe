import type { Command } from "commander";
import { parseCount } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { findWorkflow } from "../named-target.js";
import { printJson, printTable } from "../output.js";
import { openSession } from "../session.js";
import { formatMs } from "../workflow-output.js";

/** `runnel versions <workflow>`: the workflow's kept versions, what a run's `version` and a replay's `--with-code failed-run` name. */
export function registerVersions(program: Command, context: CommandContext): void {
  program
    .command("versions <workflow>")
    .description("A workflow's kept versions, newest first: number, when saved, its steps (each save of the workflow is one; a run shows the version it ran)")
    .option("-n, --count <count>", "how many of the latest (1 to 100)", "20")
    .option("--json", "print JSON")
    .action(async (idOrName: string, options: { count: string; json?: boolean }, command: Command) => {
      const limit = parseCount(options.count, "-n");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const workflow = await findWorkflow(client, idOrName);
      const { data } = await client.listWorkflowVersions(workflow.id, { limit });
      if (options.json) return printJson(context.io, data);
      printTable(
        context.io,
        ["version", "saved", "steps"],
        data.map((version) => [`${version.version}${version.current ? " (current)" : ""}`, formatMs(version.saved_at_ms), version.steps.map((step) => step.name).join(", ")]),
      );
      context.io.stderr.write(`Replay an error with the code its run ran: \`runnel errors replay ${workflow.name_slug} <error id> --with-code failed-run\`.\n`);
    });
}
