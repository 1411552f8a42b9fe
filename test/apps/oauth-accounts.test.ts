import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { followLikeABrowser, oauthAppBody, startOAuthProvider, type TestOAuthProvider } from "../helpers/oauth-provider.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, logsOf } from "../helpers/sources.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * Connected accounts through a real OAuth 2 server on loopback
 * (oidc-provider: code + PKCE required, refresh tokens, revocable grants):
 * the whole redirect flow, `$auth` in a source's and a workflow step's app
 * methods calling a protected API, one refresh for 20 runs at once, a
 * revoked grant marking the account and failing runs with an AuthError,
 * and nothing of another user's account visible or usable.
 */
let server: TestServer;
let provider: TestOAuthProvider;
let alice: { id: string; key: string };
let bob: { id: string; key: string };
let dataDir: string;
/** Every secret the test saw or gave: none may be in the SQLite file. */
const secrets: string[] = [];

beforeAll(async () => {
  // The provider and its API live on loopback: allowed, as an admin allows an internal host.
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" }, { keepData: true });
  dataDir = server.dataDir;
  provider = await startOAuthProvider({ redirectUri: `${server.url}/oauth/callback` });
  secrets.push(provider.clientSecret);
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});

afterAll(async () => {
  await provider?.close();
  await server?.close();
});

const APP = "test-idp";
const addApp = (key: string) =>
  call(server.url, "POST", "/v1/apps", {
    key,
    json: oauthAppBody(provider, APP, "Test IdP"),
  });

/** An app prop whose method calls the protected API with the account's token, as app files do. */
const appProp = () => `{ type: "app", app: "${APP}", methods: {
  async me() {
    const answer = await fetch("${provider.issuer}/api/me", { headers: { authorization: "Bearer " + this.$auth.oauth_access_token } });
    return { status: answer.status, body: await answer.json(), keys: Object.keys(this.$auth).sort() };
  },
  async meOrRefresh() {
    const first = await this.me();
    if (first.status !== 401) return { ...first, refreshed: false };
    // The API refused the token before its expiry: ask Runnel for a fresh one, once.
    await this.$auth.refresh();
    return { ...(await this.me()), refreshed: true };
  },
} }`;

const SOURCE = () => `export default defineComponent({
  name: "Who am I",
  version: "0.0.1",
  props: { idp: ${appProp()}, http: { type: "$.interface.http", customResponse: true } },
  async run(event) {
    const me = event.query.retry ? await this.idp.meOrRefresh() : await this.idp.me();
    this.http.respond({ status: 200, body: me });
  },
})`;

const STEP = () => `export default defineComponent({
  props: { idp: ${appProp()} },
  async run() { return await this.idp.me(); },
})`;

/** Starts a connection (or a reconnection) and goes through Runnel's confirm page and the provider like a browser; returns the page Runnel ends on. */
async function connectThroughBrowser(start: () => Promise<{ status: number; body: any }>): Promise<{ status: number; text: string; url: string }> {
  const started = await start();
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const authorizationUrl = new URL(started.body.data.authorization_url);
  // Runnel's own page first: it binds the connection to the browser that confirms it.
  expect(authorizationUrl.origin).toBe(new URL(server.url).origin);
  expect(authorizationUrl.pathname).toBe("/oauth/authorize");
  expect(authorizationUrl.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{40,}$/);
  return followLikeABrowser(authorizationUrl.toString(), { confirm: true });
}

/** Posts Runnel's confirm form for `state` as the page would (its own Origin); the answer is not followed. */
async function confirmConnection(state: string, origin = new URL(server.url).origin): Promise<Response> {
  return fetch(`${server.url}/oauth/authorize`, { method: "POST", redirect: "manual", headers: { origin, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ state }).toString() });
}

let accountId: string;
let sourceEndpoint: string;
let sourceId: string;
let workflow: any;

describe("apps", () => {
  it("lists the shipped apps, lets an admin add one with its client, and never shows a client secret", async () => {
    const listed = await call(server.url, "GET", "/v1/apps", { key: alice.key });
    expect(listed.status).toBe(200);
    const slugs = listed.body.data.map((app: { app: string }) => app.app);
    for (const slug of ["github", "gitlab", "slack", "google", "microsoft", "notion", "discord", "airtable", "hubspot", "linear", "dropbox", "stripe", "openai", "anthropic", "twilio", "sendgrid", "telegram_bot_api", "http_api_key", "basic_auth"]) {
      expect(slugs).toContain(slug);
    }
    const github = await call(server.url, "GET", "/v1/apps/github", { key: alice.key });
    expect(github.body.data).toMatchObject({ app: "github", auth: { type: "oauth", authorize_url: "https://github.com/login/oauth/authorize", pkce: true }, oauth_client: null });

    const refused = await addApp(alice.key);
    expect(refused.status).toBe(403);
    const added = await addApp(server.adminKey);
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.data).toMatchObject({ app: APP, shipped: false, oauth_client: { client_id: provider.clientId, source: "api" } });
    expect(JSON.stringify(added.body)).not.toContain(provider.clientSecret);
    expect((await addApp(server.adminKey)).status).toBe(409);
    expect(JSON.stringify((await call(server.url, "GET", `/v1/apps/${APP}`, { key: alice.key })).body)).not.toContain(provider.clientSecret);
  });

  it("refuses to start a connection for an app without a client, saying how an admin sets one", async () => {
    const refused = await call(server.url, "POST", "/v1/accounts/oauth/start", { key: alice.key, json: { app: "gitlab", name: "work" } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/GitLab has no OAuth client on this server yet.*PUT \/v1\/apps\/gitlab\/oauth_client.*RUNNEL_OAUTH_GITLAB_CLIENT_ID/);
  });
});

describe("an OAuth account", () => {
  it("is connected through the whole redirect flow, and listed without any token", async () => {
    const page = await connectThroughBrowser(() => call(server.url, "POST", "/v1/accounts/oauth/start", { key: alice.key, json: { app: APP, name: "work" } }));
    expect(page.url.startsWith(`${server.url}/oauth/callback?`)).toBe(true);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/Your Test IdP account &#39;work&#39; is connected as apn_/);

    const listed = await call(server.url, "GET", "/v1/accounts", { key: alice.key });
    expect(listed.body.data).toHaveLength(1);
    const account = listed.body.data[0];
    expect(account).toMatchObject({ app: APP, app_name: "Test IdP", name: "work", auth_type: "oauth", health: "ok", health_message: null });
    expect(account.expires_at).toBeGreaterThan(Date.now() / 1000 + 3000);
    expect(Object.keys(account).join(",")).not.toMatch(/token|secret|fields/);
    accountId = account.id;

    // The callback's link works once: the state is gone after its use.
    const again = await fetch(page.url);
    expect(again.status).toBe(400);
    expect(await again.text()).toMatch(/used already or has expired/);
  });

  it("gives a source's app methods the token through $auth, and nothing else of the account", async () => {
    const source = await deploySource(server, alice.key, { component_code: SOURCE(), filename: "whoami.mjs", configured_props: { idp: { authProvisionId: accountId } } });
    sourceId = source.id;
    sourceEndpoint = source.endpoint_url;
    expect(JSON.stringify(source)).not.toMatch(/oauth_access_token/);
    const answer = await fetch(sourceEndpoint, { method: "POST", body: "{}" });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ status: 200, body: { sub: "user-1", scope: expect.stringContaining("api") }, keys: ["oauth_access_token", "oauth_refresh_token"] });
  });

  it("gives a workflow step's app methods the token through $auth", async () => {
    workflow = await createWorkflow(server, alice.key, { name: "Uses the IdP", trigger: { type: "http" }, steps: [{ name: "me", code: STEP(), props: { idp: { authProvisionId: accountId } } }] });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", body: "x" });
    const runs = await waitFor(() => runsOf(server, alice.key, workflow.id), (listed) => listed.length === 1 && listed[0].status !== "running", "the run");
    expect(runs[0].status).toBe("success");
    expect(runs[0].steps[0].$return_value).toMatchObject({ status: 200, body: { sub: "user-1" } });
  });

  it("is refreshed once when its token is about to lapse, however many runs need it at that moment", async () => {
    // Reconnected with a token that lapses within the refresh margin; later tokens last an hour.
    provider.setAccessTokenSeconds(60);
    const page = await connectThroughBrowser(() => call(server.url, "POST", `/v1/accounts/${accountId}/reconnect`, { key: alice.key }));
    expect(page.text).toMatch(/is connected as apn_/);
    provider.setAccessTokenSeconds(3600);
    const account = (await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data;
    expect(account.expires_at).toBeLessThan(Date.now() / 1000 + 120);
    expect((await call(server.url, "GET", "/v1/accounts", { key: alice.key })).body.data).toHaveLength(1);
    expect((await call(server.url, "GET", `/v1/accounts?app=${APP}`, { key: alice.key })).body.data).toHaveLength(1);
    expect((await call(server.url, "GET", "/v1/accounts?app=github", { key: alice.key })).body.data).toEqual([]);

    const before = { ...provider.refreshes };
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(sourceEndpoint, { method: "POST", body: "{}" }).then(async (response) => ({ status: response.status, body: await response.json() }))));
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: { status: 200, body: { sub: "user-1" } } });
    expect(provider.refreshes.ok - before.ok).toBe(1);
    expect(provider.refreshes.failed - before.failed).toBe(0);
    const refreshed = (await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data;
    expect(refreshed.expires_at).toBeGreaterThan(Date.now() / 1000 + 3000);
    expect(refreshed.health).toBe("ok");
  });

  it("is refreshed on demand when app code gets a 401 and calls $auth.refresh(), once for many runs", async () => {
    await provider.revokeAccessTokens();
    const before = { ...provider.refreshes };
    const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(`${sourceEndpoint}?retry=1`, { method: "POST", body: "{}" }).then((response) => response.json())));
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: { sub: "user-1" } });
    expect(answers.some((answer: any) => answer.refreshed === true)).toBe(true);
    expect(provider.refreshes.ok - before.ok).toBe(1);
    // Without a 401, no refresh.
    expect(await (await fetch(`${sourceEndpoint}?retry=1`, { method: "POST", body: "{}" })).json()).toMatchObject({ status: 200, refreshed: false });
    expect(provider.refreshes.ok - before.ok).toBe(1);
  });

  it("is marked as needing reconnection when the provider refuses its refresh, and runs fail with an AuthError naming it", async () => {
    provider.setAccessTokenSeconds(60);
    await connectThroughBrowser(() => call(server.url, "POST", `/v1/accounts/${accountId}/reconnect`, { key: alice.key }));
    provider.setAccessTokenSeconds(3600);
    await provider.revokeAll();

    const before = { ...provider.refreshes };
    const failed = await fetch(sourceEndpoint, { method: "POST", body: "{}" });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(provider.refreshes.failed - before.failed).toBe(1);
    const account = (await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data;
    expect(account.health).toBe("needs_reconnect");
    expect(account.health_message).toMatch(/the provider refused to refresh its token \(the provider answered 400 invalid_grant/);
    const logs = await waitFor(() => logsOf(server, alice.key, sourceId), (lines) => lines.some((line) => line.includes("AuthError")), "the source's AuthError in its logs");
    expect(logs.join("\n")).toMatch(/AuthError: The Test IdP account 'work' must be reconnected: the provider refused to refresh its token.*runnel accounts reconnect apn_/);

    // A marked account fails runs at once: the provider is not asked again.
    await fetch(workflow.trigger.endpoint_url, { method: "POST", body: "x" });
    const errors = await waitFor(() => errorsOf(server, alice.key, workflow.id), (listed) => listed.data.length > 0, "the workflow's $errors");
    expect(errors.data[0].event.error).toMatchObject({ code: "AuthError", cellId: workflow.steps[0].id });
    expect(errors.data[0].event.error.msg).toMatch(/^The Test IdP account 'work' must be reconnected: the provider refused to refresh its token/);
    expect(provider.refreshes.failed - before.failed).toBe(1);

    // Reconnecting puts it right, under the same id.
    await connectThroughBrowser(() => call(server.url, "POST", `/v1/accounts/${accountId}/reconnect`, { key: alice.key }));
    expect((await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data.health).toBe("ok");
    const answer = await fetch(sourceEndpoint, { method: "POST", body: "{}" });
    expect(((await answer.json()) as { body: unknown }).body).toMatchObject({ sub: "user-1" });
  });
});

describe("the browser a connection is finished in", () => {
  const startFor = async (user: { key: string }, name: string) => {
    const started = await call(server.url, "POST", "/v1/accounts/oauth/start", { key: user.key, json: { app: APP, name } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    return new URL(started.body.data.authorization_url).searchParams.get("state")!;
  };

  it("asks the person to confirm, naming the Runnel user, then sends the browser to the provider with PKCE and a binding cookie", async () => {
    const state = await startFor(bob, "confirmed");
    const confirm = await fetch(`${server.url}/oauth/authorize?state=${state}`);
    expect(confirm.status).toBe(200);
    const text = await confirm.text();
    expect(text).toContain("Connect a Test IdP account as &#39;confirmed&#39; to the Runnel user bob?");
    expect(confirm.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const posted = await confirmConnection(state);
    expect(posted.status).toBe(303);
    const sentTo = new URL(posted.headers.get("location")!);
    expect(sentTo.origin).toBe(provider.issuer);
    expect(sentTo.searchParams.get("state")).toBe(state);
    expect(sentTo.searchParams.get("code_challenge_method")).toBe("S256");
    expect(sentTo.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sentTo.searchParams.get("redirect_uri")).toBe(`${server.url}/oauth/callback`);
    expect(posted.headers.getSetCookie().join("\n")).toMatch(/^runnel_oauth_[0-9a-f]{16}=\S+; HttpOnly; SameSite=Lax; Path=\/oauth; Max-Age=600/m);
  });

  it("refuses a confirmation posted from another site, and connects nothing in a browser that did not confirm, leaving the connection to its own browser", async () => {
    const state = await startFor(bob, "bound");
    const forged = await confirmConnection(state, "https://evil.example");
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("did not come from Runnel&#39;s own page");
    // Someone handed the provider's address goes through the provider in a browser of their own: the callback refuses.
    const posted = await confirmConnection(state);
    const providerUrl = posted.headers.get("location")!;
    const elsewhere = await followLikeABrowser(providerUrl);
    expect(elsewhere.url).toContain("/oauth/callback");
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain("This connection was not started in this browser");
    expect((await call(server.url, "GET", "/v1/accounts", { key: bob.key })).body.data).toEqual([]);
    // The browser that confirmed still finishes it (the refusal did not use the connection up).
    const jar = new Map([[new URL(server.url).host, new Map(posted.headers.getSetCookie().map((line) => line.split(";")[0]!.split("=") as [string, string]).map(([name, ...rest]) => [name, rest.join("=")] as [string, string]))]]);
    const finished = await followLikeABrowser(providerUrl, { jar });
    expect(finished.status, finished.text).toBe(200);
    expect(finished.text).toContain("account &#39;bound&#39; is connected");
    const accounts = (await call(server.url, "GET", "/v1/accounts", { key: bob.key })).body.data;
    expect(accounts.map((account: { name: string }) => account.name)).toEqual(["bound"]);
    expect((await call(server.url, "DELETE", `/v1/accounts/${accounts[0].id}`, { key: bob.key })).status).toBeLessThan(300);
  });

  it("goes straight on to the provider in a browser signed in to the console as the starter, and asks in one signed in as someone else", async () => {
    const session = async (key: string) => {
      const created = await fetch(`${server.url}/v1/sessions`, { method: "POST", headers: { "content-type": "application/json", origin: new URL(server.url).origin }, body: JSON.stringify({ api_key: key }) });
      expect(created.status, await created.clone().text()).toBeLessThan(300);
      return created.headers.getSetCookie().find((line) => line.startsWith("runnel_session="))!.split(";")[0]!;
    };
    const state = await startFor(bob, "console");
    const asBob = await fetch(`${server.url}/oauth/authorize?state=${state}`, { redirect: "manual", headers: { cookie: await session(bob.key) } });
    expect(asBob.status).toBe(303);
    expect(new URL(asBob.headers.get("location")!).searchParams.get("state")).toBe(state);
    expect(asBob.headers.getSetCookie().some((line) => line.startsWith("runnel_oauth_"))).toBe(true);
    const asAlice = await fetch(`${server.url}/oauth/authorize?state=${state}`, { redirect: "manual", headers: { cookie: await session(alice.key) } });
    expect(asAlice.status).toBe(200);
    expect(await asAlice.text()).toContain("to the Runnel user bob?");
  });
});

describe("the callback page", () => {
  it("says what failed, as text: a refusal at the provider, an unknown state", async () => {
    const started = await call(server.url, "POST", "/v1/accounts/oauth/start", { key: bob.key, json: { app: APP, name: "denied" } });
    const state = new URL(started.body.data.authorization_url).searchParams.get("state")!;
    const denied = await fetch(`${server.url}/oauth/callback?state=${encodeURIComponent(state)}&error=access_denied&error_description=${encodeURIComponent("<script>alert(1)</script>")}`);
    expect(denied.status).toBe(400);
    const page = await denied.text();
    expect(page).toContain("Test IdP did not grant access (access_denied: &#60;script&#62;alert(1)&#60;/script&#62;)");
    expect(page).not.toContain("<script>");
    expect(denied.headers.get("content-security-policy")).toContain("default-src 'none'");
    const unknown = await fetch(`${server.url}/oauth/callback?state=not-a-state&code=x`);
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("This connection link was used already or has expired");
    expect((await call(server.url, "GET", "/v1/accounts", { key: bob.key })).body.data).toEqual([]);
  });
});

describe("another user", () => {
  it("cannot see, rename, delete or use the account", async () => {
    expect((await call(server.url, "GET", "/v1/accounts", { key: bob.key })).body.data).toEqual([]);
    for (const [method, path, json] of [
      ["GET", `/v1/accounts/${accountId}`, undefined],
      ["PATCH", `/v1/accounts/${accountId}`, { name: "mine" }],
      ["POST", `/v1/accounts/${accountId}/reconnect`, {}],
      ["DELETE", `/v1/accounts/${accountId}`, undefined],
    ] as const) {
      const answer = await call(server.url, method, path, { key: bob.key, ...(json ? { json } : {}) });
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    const source = await call(server.url, "POST", "/v1/sources", { key: bob.key, json: { component_code: SOURCE(), filename: "whoami.mjs", configured_props: { idp: { authProvisionId: accountId } } } });
    expect(source.status).toBe(400);
    expect(source.body.error.details.field).toBe("configured_props.idp");
    expect(source.body.error.message).toMatch(/you have no connected account apn_/);
    const steps = await call(server.url, "POST", "/v1/workflows", { key: bob.key, json: { name: "Borrowed", trigger: { type: "http" }, steps: [{ name: "me", code: STEP(), props: { idp: { authProvisionId: accountId } } }] } });
    expect(steps.status).toBe(400);
    expect(steps.body.error.details.field).toBe("steps[0].props.idp");
    expect((await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data.name).toBe("work");
  });
});

describe("a key-based account", () => {
  it("is checked against the app's fields, used through $auth, renamed and deleted", async () => {
    const missing = await call(server.url, "POST", "/v1/accounts", { key: alice.key, json: { app: "twilio", name: "ops", fields: { AccountSid: "AC123", Sid: "SK123" } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe("fields.Secret");
    expect(missing.body.error.message).toMatch(/API key secret \(or the auth token\) \(fields\.Secret\) is required to connect a Twilio account/);
    const unknown = await call(server.url, "POST", "/v1/accounts", { key: alice.key, json: { app: "stripe", name: "x", fields: { api_key: "k", apikey: "k" } } });
    expect(unknown.body.error.details.field).toBe("fields.apikey");
    const oauthApp = await call(server.url, "POST", "/v1/accounts", { key: alice.key, json: { app: APP, name: "x", fields: {} } });
    expect(oauthApp.body.error.message).toMatch(/connects through OAuth: POST \/v1\/accounts\/oauth\/start/);

    const key = `sk_test_${Math.random().toString(36).slice(2)}${Date.now()}`;
    secrets.push(key);
    const created = await call(server.url, "POST", "/v1/accounts", { key: alice.key, json: { app: "stripe", name: "billing", fields: { api_key: key } } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ app: "stripe", name: "billing", auth_type: "keys", health: "ok", expires_at: null });
    expect(JSON.stringify(created.body)).not.toContain(key);
    const id = created.body.data.id;

    const source = await deploySource(server, alice.key, {
      component_code: `export default defineComponent({ name: "Stripe key", version: "0.0.1", props: { stripe: { type: "app", app: "stripe", methods: { keyLength() { return this.$auth.api_key.length; } } }, http: { type: "$.interface.http", customResponse: true } }, run() { this.http.respond({ status: 200, body: { length: this.stripe.keyLength(), fields: Object.keys(this.stripe.$auth) } }); } })`,
      filename: "stripe.mjs",
      configured_props: { stripe: { authProvisionId: id } },
    });
    expect(await (await fetch(source.endpoint_url, { method: "POST", body: "{}" })).json()).toEqual({ length: key.length, fields: ["api_key"] });
    // An account of another app is refused on a prop of this one.
    const wrongApp = await call(server.url, "POST", "/v1/sources", { key: alice.key, json: { component_code: SOURCE(), filename: "whoami.mjs", configured_props: { idp: { authProvisionId: id } } } });
    expect(wrongApp.body.error.message).toMatch(/Prop "idp" takes a test-idp account, but apn_\w+ \('billing'\) is a stripe account/);

    const renamed = await call(server.url, "PATCH", `/v1/accounts/${id}`, { key: alice.key, json: { name: "billing-eu" } });
    expect(renamed.body.data.name).toBe("billing-eu");
    const newKey = `${key}-rotated`;
    secrets.push(newKey);
    expect((await call(server.url, "POST", `/v1/accounts/${id}/reconnect`, { key: alice.key, json: { fields: { api_key: newKey } } })).status).toBe(200);
    expect(await (await fetch(source.endpoint_url, { method: "POST", body: "{}" })).json()).toMatchObject({ length: newKey.length });

    expect((await call(server.url, "DELETE", `/v1/accounts/${id}`, { key: alice.key })).status).toBe(204);
    expect((await call(server.url, "GET", `/v1/accounts/${id}`, { key: alice.key })).status).toBe(404);
    const afterDelete = await fetch(source.endpoint_url, { method: "POST", body: "{}" });
    expect(afterDelete.status).toBeGreaterThanOrEqual(500);
    const logs = await waitFor(() => logsOf(server, alice.key, source.id), (lines) => lines.some((line) => line.includes("AuthError")), "the AuthError");
    expect(logs.join("\n")).toMatch(/no longer exists \(it was deleted\)/);
  });
});

describe("at rest", () => {
  it("keeps no token, key or client secret in plaintext in the SQLite file", async () => {
    // Every access and refresh token the provider gave out, the client secret and the keys given.
    expect(provider.apiCalls.ok).toBeGreaterThan(20);
    const files = (await readdir(dataDir)).filter((name) => name.startsWith("runnel.sqlite"));
    const haystack = Buffer.concat(await Promise.all(files.map((name) => readFile(join(dataDir, name)))));
    expect(haystack.length).toBeGreaterThan(0);
    const needles = [...secrets, ...provider.issuedTokens()];
    expect(needles.length).toBeGreaterThan(4);
    for (const needle of needles) expect(haystack.includes(Buffer.from(needle)), `found ${needle.slice(0, 8)}…`).toBe(false);
  });
});
