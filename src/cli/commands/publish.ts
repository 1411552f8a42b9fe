import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { bundleFile, classifyTarget } from "../component-code.js";
import { printJson, printLines } from "../output.js";
import { openSession } from "../session.js";

export function registerPublish(program: Command, context: CommandContext): void {
  program
    .command("publish <file>")
    .description("Publish an action (or a source) to your registry under its key and semantic version, or an app file (type: \"app\") under its app slug; its relative imports travel with it")
    .option("--json", "print JSON")
    .addHelpText("after", "\nPublished versions never change: to publish other code, bump the version. A published app is used by components that declare { type: \"app\", app: \"<slug>\" } without bundling its file.")
    .action(async (file: string, options: { json?: boolean }, command: Command) => {
      const target = await classifyTarget(file);
      if (target.kind !== "file") throw new Error(`No such file: ${file}. Give the path to a component file to publish.`);
      const { input } = await bundleFile(target.path);
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const published = await client.publishComponent(input);
      if (options.json) return printJson(context.io, published);
      printLines(context.io, [`Published ${published.key}@${published.version} (${published.kind})`]);
    });
}
