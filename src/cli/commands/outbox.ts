import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { formatTime, printJson, printTable } from "../output.js";
import { openSession } from "../session.js";

export function registerOutbox(program: Command, context: CommandContext): void {
  program
    .command("outbox")
    .description("List the mails Runnel sent you (error notifications, $.send.email), newest first, with their status")
    .option("-n, --limit <count>", "how many (1 to 100)", "20")
    .option("--json", "print JSON")
    .action(async (options: { limit: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listOutbox({ limit: Number(options.limit) });
      if (options.json) return printJson(context.io, page);
      if (page.data.length === 0) return void context.io.stderr.write("No mail yet.\n");
      printTable(
        context.io,
        ["time", "status", "to", "subject"],
        page.data.map((mail) => [formatTime(mail.created_at), mail.status, mail.to ?? "(no address)", mail.subject]),
      );
      if (page.data.some((mail) => mail.to === null)) {
        context.io.stderr.write("Mails with no address were not sent: you have no e-mail address. Set one with `runnel users update --email you@example.com`.\n");
      }
      for (const mail of page.data) {
        if (mail.status === "failed") context.io.stderr.write(`${mail.id} (${mail.subject}) failed: ${mail.error ?? "no reason recorded"}\n`);
      }
      if (page.data.some((mail) => mail.status === "outbox" && mail.to !== null)) {
        context.io.stderr.write("Mails in status outbox were not delivered: the server has no RUNNEL_SMTP_URL (ask its admin to set one).\n");
      }
    });
}
