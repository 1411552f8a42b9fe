import type { Command } from "commander";
import { parseCount } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { showLatestThenFollow } from "../follow.js";
import { openSession } from "../session.js";
import { printEvent } from "../source-output.js";

export function registerEvents(program: Command, context: CommandContext): void {
  program
    .command("events <id-or-name>")
    .description("Show a source's latest events, oldest first; -f keeps printing new ones as they are emitted")
    .option("-n, --count <count>", "how many of the latest (1 to 100)", "10")
    .option("-f, --follow", "then follow new events until Ctrl-C")
    .option("--json", "print JSON (one object per line with -f)")
    .action(async (idOrName: string, options: { count: string; follow?: boolean; json?: boolean }, command: Command) => {
      const limit = parseCount(options.count, "-n");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      // Resolved once, so that a name and an id behave the same for both requests.
      const source = await client.getSource(idOrName);
      const code = await showLatestThenFollow({
        io: context.io,
        latest: async () => (await client.listEventSummaries(source.id, { limit, expand: true })).data,
        open: options.follow ? (signal) => client.followEvents(source.id, signal) : undefined,
        print: (event) => printEvent(context.io, event),
        json: Boolean(options.json),
        what: `events of ${source.name_slug}`,
      });
      context.setExitCode(code);
    });
}
