import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { openSession } from "../session.js";

export function registerUsers(program: Command, context: CommandContext): void {
  const users = program.command("users").description("Manage users (admins only)");

  users
    .command("create <username>")
    .description("Create a user; prints the new user's API key, once")
    .option("--email <email>", "the user's e-mail address")
    .option("--admin", "make the user an admin")
    .option("--json", "print JSON")
    .action(async (username: string, options: { email?: string; admin?: boolean; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const created = await client.createUser({ username, ...(options.email ? { email: options.email } : {}), admin: Boolean(options.admin) });
      if (options.json) return printJson(context.io, created);
      context.io.stdout.write(`${created.api_key.key}\n`);
      context.io.stderr.write(
        `Created ${created.is_admin ? "admin " : ""}user ${created.username} (${created.id}). Above is their API key: hand it over now, it is not shown again.\n`,
      );
    });
}
