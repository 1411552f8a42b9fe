import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { findSourceOrWorkflow } from "../named-target.js";
import { openSession } from "../session.js";

export function registerDelete(program: Command, context: CommandContext): void {
  program
    .command("delete <id-or-name>")
    .description(
      "Delete a deployed source (runs its deactivate hook; its endpoint, events and logs go with it) or a workflow (with its inline trigger, runs and errors); a name is looked up among both",
    )
    .option("--json", "print JSON")
    .action(async (idOrName: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      // Read first, so that the message names what was deleted whichever of id or name was given.
      const found = await findSourceOrWorkflow(client, idOrName);
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
