import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli, succeeded, type CliResult } from "../helpers/child.js";
import { followLikeABrowser, startOAuthProvider, type TestOAuthProvider } from "../helpers/oauth-provider.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * `runnel accounts` against a real server and a real OAuth server on
 * loopback: connect prints the address, waits for the callback (the test
 * plays the browser) and says which account it made; key-based accounts
 * from --field; list, reconnect, rename, delete.
 */
describe("runnel accounts", () => {
  let server: TestServer;
  let provider: TestOAuthProvider;
  let dir: string;
  let env: Record<string, string>;
  const cli = (...args: string[]): Promise<CliResult> => runCli(args, { env, cwd: dir });

  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    provider = await startOAuthProvider({ redirectUri: `${server.url}/oauth/callback` });
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-accounts-"));
    const added = await call(server.url, "POST", "/v1/apps", {
      key: server.adminKey,
      json: {
        app: "test-idp",
        name: "Test IdP",
        auth: { type: "oauth", authorize_url: `${provider.issuer}/auth`, token_url: `${provider.issuer}/token`, scopes: ["openid", "offline_access"], authorize_params: { prompt: "consent" }, client_id: provider.clientId, client_secret: provider.clientSecret },
      },
    });
    expect(added.status).toBe(201);
    // No DISPLAY: nothing to open a browser with, as on a server.
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: (await createUser(server, "cora")).key, HOME: dir, XDG_CONFIG_HOME: dir };
  });
  afterAll(async () => {
    await provider?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("connects an OAuth account: prints the address, waits for the callback, names the account", async () => {
    const empty = succeeded(await cli("accounts", "list"));
    expect(empty.stderr).toContain("runnel accounts connect <app>");
    const connecting = startCli(["accounts", "connect", "test-idp", "--name", "work"], { env, cwd: dir });
    const [, url] = await connecting.waitFor(/^(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)$/m);
    const page = await followLikeABrowser(url!, { confirm: true });
    expect(page.text).toContain("is connected as apn_");
    const [, id] = await connecting.waitFor(/^Connected Test IdP account 'work' as (apn_[0-9a-z]+)\. Use it with --prop <app prop>=apn_/m);
    expect((await connecting.exited).code).toBe(0);
    expect(connecting.stderr()).toContain("Waiting for Test IdP to send you back");

    const table = succeeded(await cli("accounts", "list")).stdout;
    expect(table).toMatch(new RegExp(`${id}\\s*│\\s*test-idp\\s*│\\s*work\\s*│\\s*ok`));

    const reconnecting = startCli(["accounts", "reconnect", id!], { env, cwd: dir });
    const [, again] = await reconnecting.waitFor(/^(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)$/m);
    // The account's updated_at is in seconds: the reconnection must land in a later second to be told apart.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await followLikeABrowser(again!, { confirm: true });
    await reconnecting.waitFor(new RegExp(`^Reconnected Test IdP account 'work' \\(${id}\\)\\.$`, "m"));
    expect((await reconnecting.exited).code).toBe(0);
  });

  it("connects a key-based account from --field, refuses missing fields by name, renames and deletes it", async () => {
    const refused = await cli("accounts", "connect", "twilio", "--field", "account_sid=AC1");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("Twilio accounts need auth_token: give them with --field <name>=<value>");
    const created = JSON.parse(succeeded(await cli("accounts", "connect", "stripe", "--name", "billing", "--field", "api_key=sk_test_cli_123", "--json")).stdout);
    expect(created).toMatchObject({ app: "stripe", name: "billing", health: "ok" });
    expect(JSON.stringify(created)).not.toContain("sk_test_cli_123");
    expect(succeeded(await cli("accounts", "rename", created.id, "billing-eu")).stdout).toBe(`Renamed ${created.id} to 'billing-eu'.\n`);
    expect(succeeded(await cli("accounts", "delete", created.id)).stdout).toBe(`Deleted ${created.id}.\n`);
    const gone = await cli("accounts", "delete", created.id);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain(`You have no connected account "${created.id}"`);
  });
});
