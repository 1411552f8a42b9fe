import type { Command } from "commander";
import { ApiClient } from "../../client/api-client.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { configFilePath, readProfile, removeProfile, writeProfile } from "../profiles.js";
import { Prompter } from "../prompt.js";

const DEFAULT_SERVER_URL = "http://127.0.0.1:8080";

export function registerLogin(program: Command, context: CommandContext): void {
  program
    .command("login")
    .description("Save a server address and API key as a profile (asks for what is not given)")
    .option("--server <url>", "server address, such as http://127.0.0.1:8080")
    .option("--api-key <key>", "API key (prefer typing it at the prompt: flags end up in shell history)")
    .option("--json", "print JSON")
    .action(async (options: { server?: string; apiKey?: string; json?: boolean }, command: Command) => {
      const { profile } = globalOptions(command);
      const path = configFilePath(context.env);
      const previous = await readProfile(path, profile);

      const prompter = new Prompter(context.io.stdin, context.io.stderr);
      let serverUrl: string;
      let apiKey: string;
      try {
        serverUrl = options.server ?? (await prompter.ask("Runnel server address", { fallback: previous?.serverUrl ?? DEFAULT_SERVER_URL }));
        apiKey = options.apiKey ?? (await prompter.ask("API key", { hidden: true }));
      } finally {
        prompter.done();
      }
      serverUrl = normaliseServerUrl(serverUrl);
      if (!apiKey) throw new Error("No API key given. The server printed one on its first start, in <data folder>/admin-api-key.");

      // Check the pair works before saving it, so a typo never replaces a good profile.
      const client = new ApiClient({ serverUrl, apiKey });
      const user = await client.me();
      await writeProfile(path, profile, { serverUrl, apiKey });

      if (options.json) {
        printJson(context.io, { profile, server_url: serverUrl, user, config_file: path });
      } else {
        context.io.stdout.write(`Logged in to ${serverUrl} as ${user.username} (profile "${profile}", saved in ${path}).\n`);
      }
    });

  program
    .command("logout")
    .description("Forget the saved API key of a profile")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { profile } = globalOptions(command);
      const path = configFilePath(context.env);
      const removed = await removeProfile(path, profile);
      if (options.json) {
        printJson(context.io, { profile, logged_out: removed });
      } else if (removed) {
        context.io.stdout.write(`Logged out of profile "${profile}". The key itself still works until you revoke it (\`runnel keys revoke\`).\n`);
      } else {
        context.io.stdout.write(`Profile "${profile}" was not logged in; nothing to do.\n`);
      }
    });
}

function normaliseServerUrl(raw: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`"${raw}" is not a server address. Give one like http://127.0.0.1:8080.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`The server address must start with http:// or https://, not ${url.protocol}//.`);
  }
  return url.toString().replace(/\/+$/, "");
}
