import type { Command } from "commander";
import type { WebhookDeliveryView } from "../../client/api-client.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { formatTime, printJson, printTable } from "../output.js";
import { openSession } from "../session.js";

/** A receiver's error is kept up to 500 characters; a table cell shows the start of it. */
const ERROR_CELL_LENGTH = 60;

/** `runnel webhooks …`: URLs of yours that subscriptions POST events to (listener ids wh_…). */
export function registerWebhooks(program: Command, context: CommandContext): void {
  const webhooks = program.command("webhooks").description("Create, list and delete webhooks (URLs that get events POSTed), and see what was delivered to them");

  webhooks
    .command("create <url>")
    .description("Create a webhook; its signing secret is shown this once")
    .option("--name <name>", "a name to recognise it by")
    .option("--description <text>", "a longer description")
    .option("--json", "print JSON (with the signing secret)")
    .action(async (url: string, options: { name?: string; description?: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const created = await client.createWebhook({ url, name: options.name, description: options.description });
      if (options.json) return printJson(context.io, created);
      context.io.stdout.write(`Created webhook ${created.id}${created.name ? ` ("${created.name}")` : ""} for ${created.url}\n`);
      context.io.stdout.write(`Signing secret: ${created.signing_secret}\n`);
      context.io.stderr.write(
        [
          "Store the signing secret now: it is not shown again. Each delivery carries X-Runnel-Signature: sha256=<hex HMAC-SHA256 of the body with it>.",
          `Send events to the webhook with \`runnel subscribe --emitter <source or workflow> --listener ${created.id}\`.`,
        ].join("\n") + "\n",
      );
    });

  webhooks
    .command("list")
    .description("List your webhooks, newest first")
    .option("-n, --limit <count>", "how many (1 to 100)", "100")
    .option("--json", "print JSON")
    .action(async (options: { limit: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listWebhooks({ limit: Number(options.limit) });
      if (options.json) return printJson(context.io, page);
      if (page.data.length === 0) return void context.io.stderr.write("No webhooks yet. Create one with `runnel webhooks create <url>`.\n");
      printTable(
        context.io,
        ["id", "name", "url", "active", "created"],
        page.data.map((webhook) => [webhook.id, webhook.name ?? "-", webhook.url, webhook.active ? "yes" : "no", formatTime(webhook.created_at)]),
      );
    });

  webhooks
    .command("delete <id>")
    .description("Delete a webhook with its subscriptions and what was waiting to be sent to it")
    .option("--json", "print JSON")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      await client.deleteWebhook(id);
      if (options.json) return printJson(context.io, { id, deleted: true });
      context.io.stdout.write(`Deleted webhook ${id}.\n`);
    });

  webhooks
    .command("deliveries <id>")
    .description("What became of each event sent to a webhook, newest first: status, attempts, the receiver's last answer")
    .option("-n, --limit <count>", "how many (1 to 100)", "20")
    .option("--json", "print JSON")
    .action(async (id: string, options: { limit: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listWebhookDeliveries(id, { limit: Number(options.limit) });
      if (options.json) return printJson(context.io, page);
      if (page.data.length === 0) return void context.io.stderr.write(`Nothing was sent to ${id} yet. Subscribe it to an emitter with \`runnel subscribe --emitter <source or workflow> --listener ${id}\`.\n`);
      printTable(
        context.io,
        ["event", "emitter", "channel", "status", "attempts", "last answer", "updated"],
        page.data.map((delivery) => [
          delivery.event_id,
          delivery.emitter_id,
          delivery.event_name || "(default)",
          delivery.status,
          String(delivery.attempts),
          lastAnswer(delivery),
          formatTime(delivery.updated_at),
        ]),
      );
    });
}

/** The receiver's status, or why there was none, cut to fit a cell. */
function lastAnswer(delivery: WebhookDeliveryView): string {
  if (delivery.last_error === null) return delivery.last_status === null ? "-" : `HTTP ${delivery.last_status}`;
  return delivery.last_error.length > ERROR_CELL_LENGTH ? `${delivery.last_error.slice(0, ERROR_CELL_LENGTH - 1)}…` : delivery.last_error;
}
