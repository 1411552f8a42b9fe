import type { Command } from "commander";
import type { CommandContext } from "../command-context.js";
import { printEvent } from "../source-output.js";
import { registerSourceFeed } from "../source-feed-command.js";
import { printRunEvent } from "../workflow-feed.js";

export function registerEvents(program: Command, context: CommandContext): void {
  registerSourceFeed(program, context, {
    command: "events",
    description: "Show a source's latest events, or the events a workflow ran on (each with its run), oldest first; -f keeps printing new ones",
    countHelp: "how many of the latest (1 to 100)",
    followHelp: "then follow new events until Ctrl-C",
    noun: "events",
    latest: async (client, sourceId, limit) => (await client.listEventSummaries(sourceId, { limit, expand: true })).data,
    follow: (client, sourceId, signal) => client.followEvents(sourceId, signal),
    print: printEvent,
    workflow: { noun: "runs", print: printRunEvent },
  });
}
