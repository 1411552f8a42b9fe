import type { Command } from "commander";
import type { ApiClient, LiveMessage, RunView } from "../client/api-client.js";
import { parseCount } from "./arguments.js";
import { globalOptions, type CommandContext } from "./command-context.js";
import { showLatestThenFollow } from "./follow.js";
import { findSourceOrWorkflow } from "./named-target.js";
import type { Io } from "./output.js";
import { openSession } from "./session.js";
import { followRuns } from "./workflow-feed.js";

/** A source's feed the CLI shows: its events, or its logs; and what the same command shows of a workflow. */
export interface SourceFeed<T extends { id: string }> {
  command: string;
  description: string;
  /** What `-n` counts, and what `-f` follows, in the help. */
  countHelp: string;
  followHelp: string;
  /** "events", for "No events of echo yet." */
  noun: string;
  latest(client: ApiClient, sourceId: string, limit: number): Promise<T[]>;
  follow(client: ApiClient, sourceId: string, signal: AbortSignal): Promise<AsyncIterable<LiveMessage<T>>>;
  print(io: Io, item: T): void;
  /** A workflow's side of the feed, made of its runs; "runs' logs", for "No runs' logs of greeter yet." */
  workflow: { noun: string; print(io: Io, run: RunView): void };
}

/** `<command> <id-or-name> [-n N] [-f] [--json]`: the latest items, oldest first, then the live ones with -f. */
export function registerSourceFeed<T extends { id: string }>(program: Command, context: CommandContext, feed: SourceFeed<T>): void {
  program
    .command(`${feed.command} <id-or-name>`)
    .description(feed.description)
    .option("-n, --count <count>", feed.countHelp, "10")
    .option("-f, --follow", feed.followHelp)
    .option("--json", "print JSON (one object per line with -f)")
    .action(async (idOrName: string, options: { count: string; follow?: boolean; json?: boolean }, command: Command) => {
      const limit = parseCount(options.count, "-n");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      // Resolved once, so that a name and an id behave the same for both requests.
      const found = await findSourceOrWorkflow(client, idOrName);
      if (found.kind === "workflow") {
        const { workflow } = found;
        const code = await showLatestThenFollow<RunView>({
          io: context.io,
          latest: async () => (await client.listRuns(workflow.id, { limit })).data,
          open: options.follow ? (signal) => followRuns(client, workflow.id, signal) : undefined,
          print: (run) => feed.workflow.print(context.io, run),
          json: Boolean(options.json),
          what: `${feed.workflow.noun} of ${workflow.name_slug}`,
        });
        return context.setExitCode(code);
      }
      const { source } = found;
      const code = await showLatestThenFollow({
        io: context.io,
        latest: () => feed.latest(client, source.id, limit),
        open: options.follow ? (signal) => feed.follow(client, source.id, signal) : undefined,
        print: (item) => feed.print(context.io, item),
        json: Boolean(options.json),
        what: `${feed.noun} of ${source.name_slug}`,
      });
      context.setExitCode(code);
    });
}
