import { spawn } from "node:child_process";
import type { Command } from "commander";
import type { AccountView, ApiClient, AppView, AuthorizationView } from "../../client/api-client.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { formatTime, printJson, printTable } from "../output.js";
import { Prompter } from "../prompt.js";
import { openSession, type Env } from "../session.js";

/** How long `connect` waits for the browser: as long as the provider's link lasts. */
const CALLBACK_WAIT_MS = 10 * 60 * 1000;
const POLL_MS = 1000;

/**
 * `runnel accounts list|connect|reconnect|rename|delete`: your connected
 * accounts of apps, which app props are configured with
 * (`--prop github=apn_…`, or `{ "authProvisionId": "apn_…" }` in a deploy).
 */
export function registerAccounts(program: Command, context: CommandContext): void {
  const accounts = program.command("accounts").description("Connect, list, reconnect and delete your accounts of apps (GitHub, Slack, Stripe…), which app props use");

  accounts
    .command("list")
    .description("List your connected accounts (never a token or key)")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listAccounts();
      if (options.json) return printJson(context.io, page);
      if (page.data.length === 0) {
        context.io.stderr.write("You have no connected accounts. Connect one: runnel accounts connect <app> (runnel accounts apps lists the apps)\n");
        return;
      }
      printTable(
        context.io,
        ["id", "app", "name", "health", "created"],
        page.data.map((account) => [account.id, account.app, account.name, account.health === "ok" ? "ok" : "must be reconnected", formatTime(account.created_at)]),
      );
    });

  accounts
    .command("apps")
    .description("List the apps accounts can be connected to, and how each connects")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listApps();
      if (options.json) return printJson(context.io, page);
      printTable(context.io, ["app", "name", "connects with"], page.data.map((app) => [app.app, app.name, describeAuth(app)]));
    });

  accounts
    .command("connect <app>")
    .description("Connect an account: an OAuth app through your browser (the address is printed, and opened where it can be), a key-based one from its fields")
    .option("--name <name>", "a name to tell the account apart (default: the app's slug)")
    .option("--field <name=value...>", "a key-based account's field (asked for on a terminal when left out; secret ones hidden)")
    .option("--no-open", "print the address without opening a browser")
    .option("--json", "print JSON")
    .action(async (slug: string, options: { name?: string; field?: string[]; open: boolean; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const app = await client.getApp(slug);
      const name = options.name ?? slug;
      let account: AccountView;
      if (app.auth.type === "keys") {
        account = await client.createAccount({ app: slug, name, fields: await readFields(context, app, options.field ?? []) });
      } else if (app.auth.type === "oauth") {
        const startedAt = Math.floor(Date.now() / 1000);
        const started = await client.startOAuth({ app: slug, name });
        showAuthorization(context, app, started, options.open);
        account = await waitForAccount(client, (listed) => listed.find((candidate) => candidate.app === slug && candidate.name === name && candidate.created_at >= startedAt), app);
      } else {
        throw new Error(`${app.name} needs no account: configure its prop without one.`);
      }
      if (options.json) return printJson(context.io, account);
      context.io.stdout.write(`Connected ${app.name} account '${account.name}' as ${account.id}. Use it with --prop <app prop>=${account.id}.\n`);
    });

  accounts
    .command("reconnect <id>")
    .description("Reconnect an account that must be (the provider refused its token), keeping its id: through the browser for OAuth, with new fields for keys")
    .option("--field <name=value...>", "a key-based account's new field (asked for on a terminal when left out)")
    .option("--no-open", "print the address without opening a browser")
    .option("--json", "print JSON")
    .action(async (id: string, options: { field?: string[]; open: boolean; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const before = await client.getAccount(id);
      const app = await client.getApp(before.app);
      let account: AccountView;
      if (app.auth.type === "keys") {
        account = (await client.reconnectAccount(id, await readFields(context, app, options.field ?? []))) as AccountView;
      } else {
        const started = (await client.reconnectAccount(id)) as AuthorizationView;
        showAuthorization(context, app, started, options.open);
        account = await waitForAccount(client, (listed) => listed.find((candidate) => candidate.id === id && candidate.health === "ok" && candidate.updated_at > before.updated_at), app);
      }
      if (options.json) return printJson(context.io, account);
      context.io.stdout.write(`Reconnected ${app.name} account '${account.name}' (${account.id}).\n`);
    });

  accounts
    .command("rename <id> <name>")
    .description("Rename a connected account")
    .option("--json", "print JSON")
    .action(async (id: string, name: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const account = await client.renameAccount(id, name);
      if (options.json) return printJson(context.io, account);
      context.io.stdout.write(`Renamed ${account.id} to '${account.name}'.\n`);
    });

  accounts
    .command("delete <id>")
    .description("Delete a connected account; runs of props configured with it fail with an AuthError until another is configured")
    .option("--json", "print JSON")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      await client.deleteAccount(id);
      if (options.json) return printJson(context.io, { id, deleted: true });
      context.io.stdout.write(`Deleted ${id}.\n`);
    });
}

function describeAuth(app: AppView): string {
  if (app.auth.type === "oauth") return app.oauth_client ? "OAuth" : "OAuth (no client yet: an admin sets one)";
  if (app.auth.type === "keys") return `keys: ${(app.auth.fields ?? []).map((field) => field.name).join(", ")}`;
  return "no account";
}

/** Prints where to go (stdout, so that a script can read it) and opens a browser where this machine has one. */
function showAuthorization(context: CommandContext, app: AppView, started: AuthorizationView, open: boolean): void {
  context.io.stdout.write(`Open this address to connect your ${app.name} account:\n${started.authorization_url}\n`);
  const opened = open && openBrowser(context.env, started.authorization_url);
  context.io.stderr.write(`${opened ? "Opened it in your browser. " : ""}Waiting for ${app.name} to send you back (the link lasts 10 minutes; Ctrl-C to stop)…\n`);
}

/** xdg-open on a Linux desktop, open on macOS, start on Windows; false where there is none (a server, CI). */
function openBrowser(env: Env, url: string): boolean {
  const opener =
    process.platform === "darwin" ? ["open", [url]] : process.platform === "win32" ? ["cmd", ["/c", "start", "", url]] : env.DISPLAY || env.WAYLAND_DISPLAY ? ["xdg-open", [url]] : null;
  if (!opener) return false;
  try {
    const child = spawn(opener[0] as string, opener[1] as string[], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/** Polls the API until the callback has stored the account (the server finishes the flow; the CLI only watches). */
async function waitForAccount(client: ApiClient, found: (accounts: AccountView[]) => AccountView | undefined, app: AppView): Promise<AccountView> {
  const until = Date.now() + CALLBACK_WAIT_MS;
  while (Date.now() < until) {
    const account = found((await client.listAccounts()).data);
    if (account) return account;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`${app.name} did not send you back within 10 minutes, so no account was connected. Run the command again.`);
}

/** A key-based account's fields: from --field name=value, the rest asked for on a terminal (secret ones hidden). */
async function readFields(context: CommandContext, app: AppView, given: string[]): Promise<Record<string, string>> {
  const fields: Record<string, string> = {};
  for (const pair of given) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new Error(`--field takes name=value (like --field api_key=sk_live_…); got "${pair.slice(0, 40)}".`);
    fields[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const missing = (app.auth.fields ?? []).filter((field) => fields[field.name] === undefined && !field.optional);
  if (missing.length === 0) return fields;
  if (!context.io.stdin.isTTY) {
    throw new Error(`${app.name} accounts need ${missing.map((field) => field.name).join(", ")}: give them with --field <name>=<value> (or run this on a terminal to be asked).`);
  }
  const prompter = new Prompter(context.io.stdin, context.io.stderr);
  try {
    for (const field of missing) fields[field.name] = await prompter.ask(field.label, { hidden: field.secret });
  } finally {
    prompter.done();
  }
  return fields;
}
