import type { Command } from "commander";
import type { ApiClient, ComponentView, SourceView, UpdateInput } from "../../client/api-client.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { classifyTarget, saveTarget } from "../component-code.js";
import { printJson, printLines } from "../output.js";
import { collectProp, configurablePropsOf, keptProps, parsePropFlags } from "../props.js";
import { openSession } from "../session.js";
import { sourceLines } from "../source-output.js";

interface UpdateOptions {
  code?: string;
  name?: string;
  prop?: string[];
  activate?: boolean;
  deactivate?: boolean;
  json?: boolean;
}

export function registerUpdate(program: Command, context: CommandContext): void {
  program
    .command("update <id-or-name>")
    .description("Update a deployed source: new code, name, props, or turn it on or off (it keeps its id and endpoint)")
    .option("--code <file|url|key>", "new code: a component file, an http(s) URL, or a saved component's key")
    .option("--name <name>", "a new name (the name slug follows it)")
    .option("--prop <key=value>", "set a prop; repeat for more (the others keep their values)", collectProp)
    .option("--activate", "turn the source on: triggers run it again")
    .option("--deactivate", "turn the source off: its endpoint and timer stop running it")
    .option("--json", "print JSON")
    .action(async (idOrName: string, options: UpdateOptions, command: Command) => {
      if (options.activate && options.deactivate) throw new Error("Give --activate or --deactivate, not both.");
      if (!options.code && !options.name && !options.prop && !options.activate && !options.deactivate) {
        throw new Error("Nothing to update: give --code, --name, --prop, --activate or --deactivate.");
      }
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const source = await client.getSource(idOrName);
      const updated = await client.updateSource(source.id, await updateInput(client, source, options));
      if (options.json) return printJson(context.io, updated);
      printLines(context.io, [`Updated ${sourceLines(updated).join("\n")}`]);
    });
}

async function updateInput(client: ApiClient, source: SourceView, options: UpdateOptions): Promise<UpdateInput> {
  const input: UpdateInput = {};
  let component: ComponentView | null = null;
  if (options.code) {
    // Saved first, so that the props below are checked against the new code's props.
    component = await saveTarget(client, await classifyTarget(options.code));
    input.component_id = component.id;
  }
  if (options.name) input.name = options.name;
  if (options.activate) input.active = true;
  if (options.deactivate) input.active = false;
  if (options.prop) {
    component ??= await client.getComponent(source.component_id);
    const props = configurablePropsOf(component);
    input.configured_props = keptProps(source.configured_props, props, parsePropFlags(options.prop, props));
  }
  return input;
}
