import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { openSession, type Env } from "../session.js";

export function registerOpen(program: Command, context: CommandContext): void {
  program
    .command("open")
    .description("Open the web console, signed in as you: prints a one-time sign-in link (valid for a minute) and opens it in your browser")
    .option("--no-browser", "only print the link")
    .option("--json", "print JSON")
    .action(async (options: { browser: boolean; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const link = await client.createSignInLink();
      if (options.json) printJson(context.io, link);
      else context.io.stdout.write(`${link.url}\n`);
      const opener = options.browser ? findOpener(context.env) : null;
      if (opener) {
        openDetached(opener, link.url, context.env);
        context.io.stderr.write("Opened the link in your browser. It works once, within a minute.\n");
      } else {
        context.io.stderr.write("Open the link in a browser: it works once, within a minute.\n");
      }
    });
}

/** The desktop's "open this URL" command, when the machine has one (macOS `open`, elsewhere `xdg-open`). */
function findOpener(env: Env): string | null {
  const names = process.platform === "darwin" ? ["open"] : ["xdg-open"];
  for (const folder of (env.PATH ?? "").split(delimiter)) {
    for (const name of names) {
      const candidate = join(folder, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here.
      }
    }
  }
  return null;
}

/** Starts the opener and lets it be: the link is printed anyway, so an opener that fails costs nothing. */
function openDetached(opener: string, url: string, env: Env): void {
  try {
    const child = spawn(opener, [url], { detached: true, stdio: "ignore", env: { ...env } as NodeJS.ProcessEnv });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // The link was printed; nothing more to do.
  }
}
