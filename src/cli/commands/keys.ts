import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { formatTime, printJson, printTable } from "../output.js";
import { openSession } from "../session.js";

export function registerKeys(program: Command, context: CommandContext): void {
  const keys = program.command("keys").description("Create, list and revoke your API keys");

  keys
    .command("list")
    .description("List your API keys, newest first")
    .option("-n, --limit <count>", "how many (1 to 100)", "100")
    .option("--json", "print JSON")
    .action(async (options: { limit: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listApiKeys({ limit: Number(options.limit) });
      if (options.json) return printJson(context.io, page);
      printTable(
        context.io,
        ["id", "name", "key", "created", "last used", "revoked"],
        page.data.map((key) => [key.id, key.name, `${key.prefix}…`, formatTime(key.created_at), formatTime(key.last_used_at), formatTime(key.revoked_at)]),
      );
    });

  keys
    .command("create")
    .description("Create an API key; its secret is shown this once")
    .option("--name <name>", "a name to recognise it by")
    .option("--json", "print JSON")
    .action(async (options: { name?: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const issued = await client.createApiKey(options.name);
      if (options.json) return printJson(context.io, issued);
      context.io.stdout.write(`${issued.key}\n`);
      context.io.stderr.write(`Created API key ${issued.id} ("${issued.name}"). Store it now: it is not shown again.\n`);
    });

  keys
    .command("revoke <id>")
    .description("Revoke an API key; requests with it fail from now on")
    .option("--json", "print JSON")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      await client.revokeApiKey(id);
      if (options.json) return printJson(context.io, { id, revoked: true });
      context.io.stdout.write(`Revoked API key ${id}.\n`);
    });
}
