import type { Command } from "commander";
import type { ApiClient, SubscriptionKey } from "../../client/api-client.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { findSourceOrWorkflow, findWorkflow } from "../named-target.js";
import { formatTime, printJson, printTable } from "../output.js";
import { openSession } from "../session.js";

interface KeyOptions {
  emitter: string;
  listener: string;
  event?: string;
  json?: boolean;
}

export function registerSubscriptions(program: Command, context: CommandContext): void {
  program
    .command("subscriptions")
    .description("List your subscriptions: which workflow runs on which channel of which emitter (triggers and $errors listeners alike)")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const subscriptions = await client.listSubscriptions();
      if (options.json) return printJson(context.io, subscriptions);
      if (subscriptions.length === 0) return void context.io.stderr.write("No subscriptions yet. Add one with `runnel subscribe --emitter <id> --listener <workflow>`.\n");
      printTable(
        context.io,
        ["id", "emitter", "listener", "event", "created"],
        subscriptions.map((subscription) => [subscription.id, subscription.emitter_id, subscription.listener_id, subscription.event_name || "(default)", formatTime(subscription.created_at)]),
      );
    });

  const withKey = (command: Command) =>
    command
      .requiredOption("--emitter <emitter>", "a source or workflow (id or name), or dc_* / p_* for all of yours")
      .requiredOption("--listener <listener>", "the workflow that runs on each event (id or name), a webhook that gets each event POSTed (wh_…), or a source (dc_…)")
      .option("--event <name>", "the channel: $errors, a name, or the default channel when left out")
      .option("--json", "print JSON");

  withKey(program.command("subscribe"))
    .description("Run a workflow on each event an emitter sends on a channel (--event $errors: on each of its errors), or POST each to a webhook (--listener wh_…)")
    .action(async (options: KeyOptions, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const subscription = await client.subscribe(await resolveKey(client, options));
      if (options.json) return printJson(context.io, subscription);
      context.io.stdout.write(`Subscribed ${subscription.listener_id} to ${subscription.emitter_id} (${subscription.event_name || "default channel"}) as ${subscription.id}.\n`);
    });

  withKey(program.command("unsubscribe"))
    .description("Remove a subscription (the same flags as subscribe)")
    .action(async (options: KeyOptions, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const key = await resolveKey(client, options);
      await client.unsubscribe(key);
      if (options.json) return printJson(context.io, { emitter_id: key.emitterId, listener_id: key.listenerId, event_name: key.eventName ?? "", deleted: true });
      context.io.stdout.write(`Unsubscribed ${key.listenerId} from ${key.emitterId} (${key.eventName || "default channel"}).\n`);
    });
}

/** Names become ids (a listener's name is a workflow's); ids and the dc_* / p_* globs are sent as given. */
async function resolveKey(client: ApiClient, options: KeyOptions): Promise<SubscriptionKey> {
  const emitterId = /^(p_|dc_)/.test(options.emitter) ? options.emitter : await idOf(client, options.emitter);
  const listenerId = /^(p_|wh_|dc_)/.test(options.listener) ? options.listener : (await findWorkflow(client, options.listener)).id;
  return { emitterId, listenerId, ...(options.event !== undefined ? { eventName: options.event } : {}) };
}

async function idOf(client: ApiClient, name: string): Promise<string> {
  const found = await findSourceOrWorkflow(client, name);
  return found.kind === "source" ? found.source.id : found.workflow.id;
}
