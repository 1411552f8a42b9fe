import type { Command } from "commander";
import type { CommandContext } from "../command-context.js";
import { printLog } from "../source-output.js";
import { registerSourceFeed } from "../source-feed-command.js";
import { printRunLogs } from "../workflow-feed.js";

export function registerLogs(program: Command, context: CommandContext): void {
  registerSourceFeed(program, context, {
    command: "logs",
    description: "Show what a source's runs and hooks printed, or a workflow's latest runs with what each step printed, oldest first; -f keeps printing",
    countHelp: "how many of the latest lines (of a workflow: runs) (1 to 100)",
    followHelp: "then follow new lines until Ctrl-C",
    noun: "logs",
    latest: async (client, sourceId, limit) => (await client.listLogs(sourceId, { limit })).data,
    follow: (client, sourceId, signal) => client.followLogs(sourceId, signal),
    print: printLog,
    workflow: { noun: "runs", print: printRunLogs },
  });
}
