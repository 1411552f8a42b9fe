import type { Command } from "commander";
import { parseJsonOption } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { openSession } from "../session.js";
import { printEvent } from "../source-output.js";

export function registerRun(program: Command, context: CommandContext): void {
  program
    .command("run <id-or-name>")
    .description("Run a source now and print the events it emitted (a timer source gets a timer event); exits 1 when the run fails")
    .option("--event <json>", "the event to run with, as JSON")
    .option("--json", "print JSON")
    .action(async (idOrName: string, options: { event?: string; json?: boolean }, command: Command) => {
      const event = options.event === undefined ? undefined : parseJsonOption(options.event, "--event");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const result = await client.runSource(idOrName, event);
      if (!result.ok) context.setExitCode(1);
      if (options.json) return printJson(context.io, result);
      result.events.forEach((emitted) => printEvent(context.io, emitted));
      if (result.ok) {
        const count = result.events.length === 1 ? "1 event" : `${result.events.length} events`;
        context.io.stderr.write(`Ran in ${Math.round(result.duration_ms)} ms and emitted ${count}.\n`);
      } else {
        const error = result.error;
        context.io.stderr.write(
          `The run failed after ${Math.round(result.duration_ms)} ms: ${error ? (error.stack ?? `${error.name}: ${error.message}`) : "no reason given"}\n` +
            `See the source's logs with \`runnel logs ${idOrName}\`.\n`,
        );
      }
    });
}
