import type { Command } from "commander";
import { parseCount } from "../arguments.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { showLatestThenFollow } from "../follow.js";
import { openSession } from "../session.js";
import { printLog } from "../source-output.js";

export function registerLogs(program: Command, context: CommandContext): void {
  program
    .command("logs <id-or-name>")
    .description("Show what a source's runs and hooks printed, and their errors, oldest first; -f keeps printing")
    .option("-n, --count <count>", "how many of the latest lines (1 to 100)", "10")
    .option("-f, --follow", "then follow new lines until Ctrl-C")
    .option("--json", "print JSON (one object per line with -f)")
    .action(async (idOrName: string, options: { count: string; follow?: boolean; json?: boolean }, command: Command) => {
      const limit = parseCount(options.count, "-n");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const source = await client.getSource(idOrName);
      const code = await showLatestThenFollow({
        io: context.io,
        latest: async () => (await client.listLogs(source.id, { limit })).data,
        open: options.follow ? (signal) => client.followLogs(source.id, signal) : undefined,
        print: (log) => printLog(context.io, log),
        json: Boolean(options.json),
        what: `logs of ${source.name_slug}`,
      });
      context.setExitCode(code);
    });
}
