import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, screenshot, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { oauthAppBody, startOAuthProvider, type TestOAuthProvider } from "../helpers/oauth-provider.js";
import { call } from "../helpers/server.js";

/**
 * The console's part of apps and managed auth (issue 17), in a real browser:
 * an OAuth account connected through a real authorization server on loopback
 * (oidc-provider, code + PKCE) by the whole redirect flow, a key-based account
 * whose secret never reaches the page after saving, and a source deployed
 * with both accounts picked in the deploy form, whose run calls the
 * provider's protected API with `$auth`.
 */
const OAUTH_APP = "ui-idp";
const KEYS_APP = "ui-keys";
const KEY_SECRET = "sk-ui-4f9Q-never-in-the-page";

const SOURCE = (issuer: string) => `export default defineComponent({
  name: "Who am I",
  version: "0.0.1",
  props: {
    idp: { type: "app", app: "${OAUTH_APP}" },
    keys: { type: "app", app: "${KEYS_APP}" },
    http: { type: "$.interface.http", customResponse: true },
  },
  async run() {
    const answer = await fetch("${issuer}/api/me", { headers: { authorization: "Bearer " + this.idp.$auth.oauth_access_token } });
    this.http.respond({ status: 200, body: { status: answer.status, me: await answer.json(), key_fields: Object.keys(this.keys.$auth).sort(), key_ends: this.keys.$auth.api_key.slice(-4) } });
  },
})`;

describe("connected accounts in the console, in a real browser", { timeout: 120_000 }, () => {
  let harness: ConsoleHarness;
  let provider: TestOAuthProvider;
  /** The endpoint of the source deployed with both accounts. */
  let endpoint = "";

  beforeAll(async () => {
    // The provider and its API are on loopback: allowed, as an admin allows an internal host.
    harness = await startConsole({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    provider = await startOAuthProvider({ redirectUri: `${harness.url}/oauth/callback` });
    const oauthApp = await call(harness.url, "POST", "/v1/apps", {
      key: harness.key,
      json: oauthAppBody(provider, OAUTH_APP, "UI IdP"),
    });
    expect(oauthApp.status, JSON.stringify(oauthApp.body)).toBe(201);
    const keysApp = await call(harness.url, "POST", "/v1/apps", {
      key: harness.key,
      json: { app: KEYS_APP, name: "UI Keys", auth: { type: "keys", fields: [{ name: "api_key", label: "API key", secret: true }, { name: "region", label: "Region", secret: false }] } },
    });
    expect(keysApp.status, JSON.stringify(keysApp.body)).toBe(201);
  }, 240_000);
  afterAll(async () => {
    await provider?.close();
    await harness?.close();
  });

  async function openAccounts(): Promise<Page> {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.getByRole("link", { name: "Accounts" }).click();
    await page.getByRole("heading", { name: "Accounts", level: 1 }).waitFor();
    return page;
  }

  it("connects an OAuth account through the provider's pages and a key account whose secret never stays in the page", async () => {
    const page = await openAccounts();
    await page.getByText("No account connected yet").waitFor();

    // OAuth: the provider's pages open in a new tab; the console sees the account arrive.
    await page.getByLabel("App").selectOption({ label: "UI IdP" });
    await page.getByLabel("Account name").fill("work");
    await page.getByRole("button", { name: "Connect with UI IdP" }).click();
    const [providerTab] = await Promise.all([page.context().waitForEvent("page"), page.getByRole("link", { name: "Continue to UI IdP to allow access" }).click()]);
    await providerTab.getByRole("heading", { name: "Account connected" }).waitFor();
    expect(new URL(providerTab.url()).pathname).toBe("/oauth/callback");
    await providerTab.close();
    await page.getByText("Your UI IdP account work is connected.").waitFor();
    await page.getByRole("button", { name: "Done" }).click();
    const oauthRow = page.getByRole("row").filter({ hasText: "UI IdP" });
    await oauthRow.getByText("Connected").waitFor();

    // Keys: the secret is typed into a password field, sent once, and gone from the page.
    await page.getByLabel("App").selectOption({ label: "UI Keys" });
    await page.getByLabel("Account name").fill("ci");
    expect(await page.getByLabel("API key").getAttribute("type")).toBe("password");
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByText("Enter the API key.").waitFor();
    await page.getByLabel("API key").fill(KEY_SECRET);
    await page.getByLabel("Region").fill("eu");
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByText("Your UI Keys account 'ci' is connected.").waitFor();
    await page.getByRole("row").filter({ hasText: "UI Keys" }).getByText("Connected").waitFor();
    expect(await page.getByLabel("API key").inputValue()).toBe("");
    expect(await page.content()).not.toContain(KEY_SECRET);

    const listed = await call(harness.url, "GET", "/v1/accounts", { key: harness.key });
    expect(listed.body.data.map((account: { app: string; name: string; health: string }) => [account.app, account.name, account.health]).sort()).toEqual([
      [OAUTH_APP, "work", "ok"],
      [KEYS_APP, "ci", "ok"],
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(KEY_SECRET);

    // Rename, with the list following.
    await page.getByRole("button", { name: "Rename UI Keys account ci" }).click();
    await page.getByLabel("New name").fill("ci-bot");
    await page.getByRole("button", { name: "Save name" }).click();
    await page.getByRole("cell", { name: "ci-bot", exact: true }).waitFor();

    await checkAccessibility(page, (shown) => shown.getByRole("cell", { name: "ci-bot", exact: true }).waitFor());
    await screenshot(page, "accounts");
    expectNoBrowserErrors(page);
  });

  it("deploys a source with both accounts picked in the deploy form, and its run uses $auth", async () => {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto("/sources/new");
    await page.getByRole("heading", { name: "Deploy a source" }).waitFor();
    await page.getByRole("radio", { name: "Paste code" }).check();
    await page.getByRole("textbox", { name: "Component code" }).click();
    await page.keyboard.insertText(SOURCE(provider.issuer));
    await page.getByRole("button", { name: "Load the component" }).click();
    await page.getByRole("heading", { name: "2. Configure and deploy" }).waitFor();

    // Not picked: the form says what to do before sending anything.
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    await page.getByText("Choose a ui-idp account, or connect a new one.").waitFor();
    expect(await page.getByRole("link", { name: "Connect a new one" }).first().getAttribute("href")).toBe(`/accounts?app=${OAUTH_APP}`);

    await page.getByRole("combobox", { name: "idp" }).selectOption({ label: "work" });
    await page.getByRole("combobox", { name: "keys" }).selectOption({ label: "ci-bot" });
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    await page.waitForURL(/\/sources\/dc_[^/?]+$/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);

    const source = await call(harness.url, "GET", `/v1/sources/${id}`, { key: harness.key });
    expect(source.status).toBe(200);
    const accounts = (await call(harness.url, "GET", "/v1/accounts", { key: harness.key })).body.data as Array<{ id: string; app: string }>;
    expect(source.body.data.configured_props).toMatchObject({
      idp: { authProvisionId: accounts.find((account) => account.app === OAUTH_APP)!.id },
      keys: { authProvisionId: accounts.find((account) => account.app === KEYS_APP)!.id },
    });

    endpoint = source.body.data.endpoint_url;
    const response = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const body = (await response.json()) as any;
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ status: 200, me: { sub: "user-1" }, key_fields: ["api_key", "region"], key_ends: KEY_SECRET.slice(-4) });
    expect(provider.apiCalls.ok).toBeGreaterThanOrEqual(1);
    expectNoBrowserErrors(page);
  });

  /** Reconnects through the Accounts page and the provider's pages in a new tab. */
  async function reconnectInConsole(page: Page, label: string): Promise<void> {
    await page.getByRole("button", { name: `Reconnect ${label}` }).click();
    await page.getByRole("button", { name: "Reconnect with UI IdP" }).click();
    const [providerTab] = await Promise.all([page.context().waitForEvent("page"), page.getByRole("link", { name: "Continue to UI IdP to allow access" }).click()]);
    await providerTab.getByRole("heading", { name: "Account connected" }).waitFor();
    await providerTab.close();
    await page.getByText("Your UI IdP account work is connected.").waitFor();
    await page.getByRole("button", { name: "Done" }).click();
  }

  it("reconnects an OAuth account, and makes one the provider stopped refreshing stand out until it is reconnected", async () => {
    const page = await openAccounts();
    const row = page.getByRole("row").filter({ hasText: "UI IdP" });
    // Short-lived tokens are refreshed at the next run; the provider will refuse once the grant is revoked.
    provider.setAccessTokenSeconds(60);
    await reconnectInConsole(page, "UI IdP account work");
    provider.setAccessTokenSeconds(3600);
    await provider.revokeAll();
    const failed = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(failed.status).toBeGreaterThanOrEqual(500);

    await page.reload();
    await row.getByText("Must be reconnected").waitFor();
    await row.getByText(/the provider refused to refresh its token/).waitFor();
    expect(await row.getByRole("button", { name: "Reconnect UI IdP account work" }).getAttribute("class")).toContain("primary");
    await checkAccessibility(page, (shown) => shown.getByText("Must be reconnected").waitFor());

    await reconnectInConsole(page, "UI IdP account work");
    await row.getByText("Connected", { exact: true }).waitFor();
    const answered = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(await answered.json()).toMatchObject({ status: 200, me: { sub: "user-1" } });
    expectNoBrowserErrors(page);
  });

  it("deletes an account after confirmation", async () => {
    const accounts = (await call(harness.url, "GET", "/v1/accounts", { key: harness.key })).body.data as Array<{ id: string; app: string }>;
    const keysAccount = accounts.find((account) => account.app === KEYS_APP)!;
    const page = await openAccounts();
    await page.getByRole("button", { name: "Delete UI Keys account ci-bot" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete the UI Keys account ci-bot?" });
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("cell", { name: "ci-bot", exact: true }).waitFor({ state: "detached" });
    expect((await call(harness.url, "GET", `/v1/accounts/${keysAccount.id}`, { key: harness.key })).status).toBe(404);
    expectNoBrowserErrors(page);
  });
});
