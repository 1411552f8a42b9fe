import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { openSession } from "../session.js";

export function registerUsers(program: Command, context: CommandContext): void {
  const users = program.command("users").description("Manage users: create them (admins only), change your own account");

  users
    .command("update")
    .description("Change your own account: --email sets where your error notices and $.send.email mails go")
    .option("--email <address>", "your e-mail address")
    .option("--no-email", "remove your address (mails then stay in the outbox)")
    .option("--json", "print JSON")
    .action(async (options: { email?: string | false; json?: boolean }, command: Command) => {
      if (options.email === undefined) throw new Error("Nothing to change: pass --email you@example.com (or --no-email to remove your address).");
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const user = await client.updateMe({ email: options.email === false ? null : options.email });
      if (options.json) return printJson(context.io, user);
      context.io.stdout.write(
        user.email ? `Your e-mail address is now ${user.email}: error notices and $.send.email mails go there.\n` : "You have no e-mail address now: mails stay in the outbox (runnel outbox).\n",
      );
    });

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
