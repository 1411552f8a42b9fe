import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson, printLines } from "../output.js";
import { configurablePropsOf } from "../props.js";
import { findSourceOrWorkflow } from "../named-target.js";
import { openSession } from "../session.js";
import { componentLines, sourceLines } from "../source-output.js";
import { workflowLines } from "../workflow-output.js";

export function registerDescribe(program: Command, context: CommandContext): void {
  program
    .command("describe <id-or-name>")
    .description("Show a deployed source (its trigger, props, and the component behind it) or a workflow (its trigger and steps); a name is looked up among both")
    .option("--json", "print JSON")
    .action(async (idOrName: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const found = await findSourceOrWorkflow(client, idOrName);
      if (found.kind === "workflow") {
        if (options.json) return printJson(context.io, found.workflow);
        return printLines(context.io, [`workflow ${workflowLines(found.workflow, { detail: true }).join("\n")}`]);
      }
      const { source } = found;
      const component = await client.getComponent(source.component_id);
      const props = configurablePropsOf(component);
      if (options.json) {
        // The code is left out: it is the bundle, long and of little use here.
        const { code: _code, ...summary } = component;
        return printJson(context.io, { ...source, component: summary });
      }
      printLines(context.io, [...sourceLines(source, { component: false }), ...componentLines(component, props, source)]);
    });
}
