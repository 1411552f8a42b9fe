import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { classifyTarget } from "../component-code.js";
import { deploySource } from "../deploy-source.js";
import { printJson, printLines } from "../output.js";
import { collectProp } from "../props.js";
import { openSession } from "../session.js";
import { sourceLines } from "../source-output.js";

export function registerDeploy(program: Command, context: CommandContext): void {
  program
    .command("deploy <file|url|key>")
    .description("Deploy a source from a component file (its relative imports travel with it), an http(s) URL of its code, or a saved component's key")
    .option("--name <name>", "a name for the deployed source (default: the component's name)")
    .option("--prop <key=value>", "a prop value; repeat for more (JSON when it parses, else text)", collectProp)
    .option("--json", "print JSON")
    .addHelpText("after", "\nRequired props left out are asked for; without a terminal the deploy fails and names them.")
    .action(async (argument: string, options: { name?: string; prop?: string[]; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const source = await deploySource(client, context.io, await classifyTarget(argument), { name: options.name, propFlags: options.prop ?? [] });
      if (options.json) return printJson(context.io, source);
      printLines(context.io, [`Deployed ${sourceLines(source).join("\n")}`]);
      const hint = source.endpoint_url
        ? `Send it a request: curl -d '{"hello":"world"}' -H 'content-type: application/json' ${source.endpoint_url}`
        : `Run it now with \`runnel run ${source.name_slug}\`.`;
      context.io.stderr.write(`${hint}\nWatch its events with \`runnel events ${source.name_slug} -f\`.\n`);
    });
}
