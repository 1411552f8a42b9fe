import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { formatTime, printJson, printLines } from "../output.js";
import { openSession } from "../session.js";

export function registerWhoami(program: Command, context: CommandContext): void {
  program
    .command("whoami")
    .description("Show the user of the current API key")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { profile } = globalOptions(command);
      const { client } = await openSession(context.env, profile);
      const user = await client.me();
      if (options.json) {
        printJson(context.io, { ...user, server_url: client.serverUrl, profile });
        return;
      }
      printLines(context.io, [
        `${user.username} (${user.id})${user.is_admin ? ", admin" : ""}`,
        `email:   ${user.email ?? "-"}`,
        `since:   ${formatTime(user.created_at)}`,
        `server:  ${client.serverUrl}`,
        `profile: ${profile}`,
      ]);
    });
}
