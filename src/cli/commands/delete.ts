import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { findSourceOrWorkflow, type NamedTarget } from "../named-target.js";
import { confirm } from "../prompt.js";
import { openSession } from "../session.js";

export function registerDelete(program: Command, context: CommandContext): void {
  program
    .command("delete <id-or-name>")
    .description(
      "Delete a deployed source (runs its deactivate hook; its endpoint, events and logs go with it) or a workflow (with its inline trigger, runs and errors); a name is looked up among both",
    )
    .option("-y, --yes", "delete without asking (needed without a terminal)")
    .option("--json", "print JSON")
    .addHelpText("after", "\nOn a terminal it asks before deleting; without one it deletes only with --yes.")
    .action(async (idOrName: string, options: { yes?: boolean; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      // Read first, so that the question and the message name what is deleted whichever of id or name was given.
      const found = await findSourceOrWorkflow(client, idOrName);
      // A workflow's own trigger is refused by the server (409 naming the workflow): no question for nothing.
      const refusedAnyway = found.kind === "source" && found.source.owned_by_workflow !== null;
      if (!options.yes && !refusedAnyway && !(await confirm(context.io, `Delete ${describeTarget(found)}?`, "--yes"))) {
        context.io.stderr.write("Nothing was deleted.\n");
        return context.setExitCode(1);
      }
      if (found.kind === "workflow") {
        const { workflow } = found;
        await client.deleteWorkflow(workflow.id);
        if (options.json) return printJson(context.io, { id: workflow.id, name_slug: workflow.name_slug, kind: "workflow", deleted: true });
        return void context.io.stdout.write(`Deleted workflow ${workflow.name_slug} (${workflow.id}).\n`);
      }
      const { source } = found;
      await client.deleteSource(source.id);
      if (options.json) return printJson(context.io, { id: source.id, name_slug: source.name_slug, deleted: true });
      context.io.stdout.write(`Deleted source ${source.name_slug} (${source.id}).\n`);
    });
}

/** What is about to go, in the words of the question. */
function describeTarget(found: NamedTarget): string {
  if (found.kind === "workflow") return `workflow ${found.workflow.name_slug} (${found.workflow.id}) with its trigger, runs and errors`;
  return `source ${found.source.name_slug} (${found.source.id}) with its events and logs`;
}
