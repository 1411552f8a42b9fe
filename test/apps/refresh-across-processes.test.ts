import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerProcess } from "../../src/chaos/server-process.js";
import { REFRESH_RETRY_AFTER_MS } from "../../src/engine/apps/account-refresh.js";
import { followLikeABrowser, oauthAppBody, startOAuthProvider, type TestOAuthProvider } from "../helpers/oauth-provider.js";
import { freePort } from "../helpers/ports.js";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, logsOf } from "../helpers/sources.js";
import { waitFor } from "../workflows/helpers.js";

/**
 * Two real server processes on one PostgreSQL schema (this one, and one
 * started from the built binary), a real OAuth server (oidc-provider) that
 * ROTATES refresh tokens (a second use of one is refused and revokes the
 * grant) and answers its token endpoint slowly, so that the runs of both
 * processes need the refresh while it is in flight: one refresh grant for
 * all of them, through the account row's refresh lease.
 * Needs `npm run build` first (the second process runs bin/runnel.js).
 */
const REFRESH_MARGIN_S = 300;
const TOKEN_DELAY_MS = 1_500;
const RUNS_PER_PROCESS = 6;

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let server: TestServer;
let otherDir: string;
let other: ServerProcess;
let provider: TestOAuthProvider;
let alice: { id: string; key: string };
let accountId: string;
let endpointPath: string;
let sourceId: string;
const instanceIds: string[] = [];

const APP = "rotating-idp";

/** A source whose app method calls the protected API with the account's token and answers with what it got, the token included (a test provider's). */
const SOURCE = () => `export default defineComponent({
  name: "Token user",
  version: "0.0.1",
  props: {
    idp: { type: "app", app: "${APP}", methods: {
      async me() {
        const answer = await fetch("${provider.issuer}/api/me", { headers: { authorization: "Bearer " + this.$auth.oauth_access_token } });
        return { status: answer.status, body: await answer.json(), token: this.$auth.oauth_access_token };
      },
      async meOrRefresh() {
        const first = await this.me();
        if (first.status !== 401) return { ...first, refreshed: false };
        // The API refused the token before its expiry: ask Runnel for a fresh one, once.
        await this.$auth.refresh();
        return { ...(await this.me()), refreshed: true };
      },
    } },
    http: { type: "$.interface.http", customResponse: true },
  },
  async run(event) { this.http.respond({ status: 200, body: event.query.retry ? await this.idp.meOrRefresh() : await this.idp.me() }); },
})`;

beforeAll(async () => {
  schema = await createTestSchema("refresh");
  // One master key for both: each process opens the tokens the other sealed.
  const env = { DATABASE_URL: schema.databaseUrl, RUNNEL_MASTER_KEY: randomBytes(32).toString("hex"), RUNNEL_EGRESS_ALLOW: "127.0.0.1" };
  server = await startTestServer(env);
  instanceIds.push(server.server.instanceId);
  otherDir = await mkdtemp(join(tmpdir(), "runnel-refresh-other-"));
  other = new ServerProcess({ dataDir: otherDir, port: await freePort(), env: { ...env, RUNNEL_LOG_LEVEL: "warn" } });
  await other.start();
  instanceIds.push((await readFile(join(otherDir, "instance-id"), "utf8")).trim());

  provider = await startOAuthProvider({ redirectUri: `${server.url}/oauth/callback`, rotateRefreshTokens: true });
  alice = await createUser(server, "alice");
  const added = await call(server.url, "POST", "/v1/apps", {
    key: server.adminKey,
    json: oauthAppBody(provider, APP, "Rotating IdP"),
  });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
});

afterAll(async () => {
  await other?.kill();
  await server?.close();
  await provider?.close();
  await schema?.drop();
  if (otherDir) await rm(otherDir, { recursive: true, force: true });
});

/** Connects (or reconnects) the account through the provider like a browser, with an access token that lasts `seconds`, and waits until it expired. */
async function connectWithExpiredToken(seconds: number): Promise<void> {
  provider.setAccessTokenSeconds(seconds);
  const started = accountId
    ? await call(server.url, "POST", `/v1/accounts/${accountId}/reconnect`, { key: alice.key })
    : await call(server.url, "POST", "/v1/accounts/oauth/start", { key: alice.key, json: { app: APP, name: "work" } });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const page = await followLikeABrowser(started.body.data.authorization_url, { confirm: true });
  expect(page.text).toMatch(/is connected as apn_/);
  const account = (await call(server.url, "GET", "/v1/accounts", { key: alice.key })).body.data[0];
  accountId = account.id;
  // Past its expiry: the provider's API refuses the old token, so a 200 below proves a refreshed one.
  await new Promise((resolve) => setTimeout(resolve, account.expires_at * 1000 - Date.now() + 1_300));
}

/** The same number of runs on each process, all at once; their answers (status and body) and the refresh lease seen while they were in flight. */
async function runOnBothProcesses(query = ""): Promise<{ answers: Array<{ process: number; status: number; body: any }>; leaseHolders: string[] }> {
  const leaseHolders = new Set<string>();
  let running = true;
  const watching = (async () => {
    while (running) {
      const { rows } = await schema.admin.query(`SELECT refreshing_by FROM ${schema.schema}.app_accounts WHERE id = $1`, [accountId]);
      if (rows[0]?.refreshing_by) leaseHolders.add(rows[0].refreshing_by as string);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const bases = [server.url, other.url];
  const answers = await Promise.all(
    bases.flatMap((base, process) =>
      Array.from({ length: RUNS_PER_PROCESS }, async () => {
        const response = await fetch(`${base}${endpointPath}${query}`, { method: "POST", body: "{}" });
        const text = await response.text();
        return { process, status: response.status, body: response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
      }),
    ),
  );
  running = false;
  await watching;
  return { answers, leaseHolders: [...leaseHolders] };
}

describe("an OAuth account used by two server processes at once", () => {
  it("is connected, and its source answers on both processes", async () => {
    await connectWithExpiredToken(2);
    const source = await deploySource(server, alice.key, { component_code: SOURCE(), filename: "token-user.mjs", configured_props: { idp: { authProvisionId: accountId } } });
    sourceId = source.id;
    endpointPath = new URL(source.endpoint_url).pathname;
    expect(endpointPath).toMatch(/^\/e\//);
  }, 60_000);

  it("is refreshed once for the runs of both processes, which all get the new token", async () => {
    // The next token lasts 15 s past the refresh margin: fresh for the runs that follow, lapsing soon after.
    provider.setAccessTokenSeconds(REFRESH_MARGIN_S + 15);
    provider.setTokenDelayMs(TOKEN_DELAY_MS);
    const before = { ...provider.refreshes };
    const { answers, leaseHolders } = await runOnBothProcesses();
    provider.setTokenDelayMs(0);

    for (const answer of answers) expect(answer, JSON.stringify(answer)).toMatchObject({ status: 200, body: { status: 200, body: { sub: "user-1" } } });
    expect(provider.refreshes.ok - before.ok).toBe(1);
    expect(provider.refreshes.failed - before.failed).toBe(0);
    const tokens = new Set(answers.map((answer) => answer.body.token));
    expect(tokens.size).toBe(1);
    expect(provider.issuedTokens()).toContain([...tokens][0]);
    // One process held the lease while the provider was slow; the other waited on it.
    expect(leaseHolders).toHaveLength(1);
    expect(instanceIds).toContain(leaseHolders[0]!.split(":")[0]);

    const account = (await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data;
    expect(account.health).toBe("ok");
    expect(account.expires_at).toBeGreaterThan(Date.now() / 1000 + REFRESH_MARGIN_S);
  }, 60_000);

  it("is refreshed once again at its next expiry, with the rotated refresh token, and then keeps working", async () => {
    const account = (await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data;
    // Wait until the token is inside the refresh margin (expires_at is rounded down): lapsing for every run from then on.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (account.expires_at - REFRESH_MARGIN_S) * 1000 - Date.now() + 1_500)));
    provider.setAccessTokenSeconds(3600);
    provider.setTokenDelayMs(TOKEN_DELAY_MS);
    const before = { ...provider.refreshes };
    const { answers } = await runOnBothProcesses();
    provider.setTokenDelayMs(0);

    for (const answer of answers) expect(answer, JSON.stringify(answer)).toMatchObject({ status: 200, body: { status: 200, body: { sub: "user-1" } } });
    expect(provider.refreshes.ok - before.ok).toBe(1);
    expect(provider.refreshes.failed - before.failed).toBe(0);
    expect(new Set(answers.map((answer) => answer.body.token)).size).toBe(1);

    // An hour's token: no refresh any more, on either process.
    const { answers: later } = await runOnBothProcesses();
    for (const answer of later) expect(answer.body).toMatchObject({ status: 200, token: answers[0]!.body.token });
    expect(provider.refreshes.ok - before.ok).toBe(1);
    expect((await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data.health).toBe("ok");
  }, 60_000);

  it("is refreshed once when the provider's API refuses its token (401) on both processes and their runs call $auth.refresh()", async () => {
    await provider.revokeAccessTokens();
    provider.setTokenDelayMs(TOKEN_DELAY_MS);
    const before = { ...provider.refreshes };
    const { answers } = await runOnBothProcesses("?retry=1");
    provider.setTokenDelayMs(0);

    for (const answer of answers) expect(answer, JSON.stringify(answer)).toMatchObject({ status: 200, body: { status: 200, body: { sub: "user-1" } } });
    // Each process had runs refused and asking for a refresh (runs that started after it ended had the new token at once).
    for (const process of [0, 1]) expect(answers.some((answer) => answer.process === process && answer.body.refreshed === true), `process ${process}`).toBe(true);
    expect(provider.refreshes.ok - before.ok).toBe(1);
    expect(provider.refreshes.failed - before.failed).toBe(0);
    expect(new Set(answers.map((answer) => answer.body.token)).size).toBe(1);
    // The new token works without another refresh.
    const { answers: later } = await runOnBothProcesses("?retry=1");
    for (const answer of later) expect(answer.body).toMatchObject({ status: 200, refreshed: false, token: answers[0]!.body.token });
    expect(provider.refreshes.ok - before.ok).toBe(1);
  }, 60_000);

  it("takes over the refresh lease of a process that died once it lapses, and refreshes once", async () => {
    await connectWithExpiredToken(2);
    provider.setAccessTokenSeconds(3600);
    // A process took the lease and died before it refreshed: its lease holds 3 s more.
    const lapsesAt = Date.now() + 3_000;
    await schema.admin.query(`UPDATE ${schema.schema}.app_accounts SET refreshing_by = 'dead-process:1', refreshing_until = $2 WHERE id = $1`, [accountId, lapsesAt]);
    provider.setTokenDelayMs(TOKEN_DELAY_MS);
    const before = { ...provider.refreshes };
    const { answers, leaseHolders } = await runOnBothProcesses();
    const finishedAt = Date.now();
    provider.setTokenDelayMs(0);

    for (const answer of answers) expect(answer, JSON.stringify(answer)).toMatchObject({ status: 200, body: { status: 200, body: { sub: "user-1" } } });
    expect(provider.refreshes.ok - before.ok).toBe(1);
    expect(provider.refreshes.failed - before.failed).toBe(0);
    expect(new Set(answers.map((answer) => answer.body.token)).size).toBe(1);
    // They waited for the dead lease to lapse, and one of the live processes took it over.
    expect(finishedAt).toBeGreaterThanOrEqual(lapsesAt);
    expect(leaseHolders).toContain("dead-process:1");
    expect(leaseHolders.filter((holder) => instanceIds.includes(holder.split(":")[0]!))).toHaveLength(1);
    const { rows } = await schema.admin.query(`SELECT refreshing_by, refreshing_until FROM ${schema.schema}.app_accounts WHERE id = $1`, [accountId]);
    expect(rows[0]).toEqual({ refreshing_by: null, refreshing_until: null });
  }, 60_000);

  it("is asked of the provider once when it is down, and every run of both processes fails saying so, not with a timeout", async () => {
    await connectWithExpiredToken(2);
    provider.setTokenOutage(503);
    provider.setTokenDelayMs(TOKEN_DELAY_MS);
    const before = provider.tokenRequests();
    const { answers } = await runOnBothProcesses();
    provider.setTokenDelayMs(0);
    provider.setTokenOutage(null);

    expect(provider.tokenRequests() - before).toBe(1);
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer)).toBeGreaterThanOrEqual(500);
      expect(answer.body.error.message, JSON.stringify(answer)).toMatch(/AuthError: The Rotating IdP account 'work' could not be refreshed: the provider answered 503 temporarily_unavailable: down for maintenance\. Runs try again/);
    }
    // Not the grant's fault: the account stays usable, and a run after a few seconds (REFRESH_RETRY_AFTER_MS) refreshes it.
    expect((await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data.health).toBe("ok");
    await new Promise((resolve) => setTimeout(resolve, REFRESH_RETRY_AFTER_MS));
    const again = await fetch(`${other.url}${endpointPath}`, { method: "POST", body: "{}" });
    expect(await again.json()).toMatchObject({ status: 200, body: { sub: "user-1" } });
  }, 60_000);

  it("is asked of the provider once when the refresh is refused, and every run of both processes fails with the same AuthError, not a timeout", async () => {
    await connectWithExpiredToken(2);
    await provider.revokeAll();
    provider.setTokenDelayMs(TOKEN_DELAY_MS);
    const before = { ...provider.refreshes };
    const { answers } = await runOnBothProcesses();
    provider.setTokenDelayMs(0);

    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer)).toBeGreaterThanOrEqual(500);
      expect(answer.body.error.message, JSON.stringify(answer)).toMatch(/AuthError: The Rotating IdP account 'work' must be reconnected: the provider refused to refresh its token \(the provider answered 400 invalid_grant.*runnel accounts reconnect apn_/);
    }
    expect(provider.refreshes.failed - before.failed).toBe(1);
    expect(provider.refreshes.ok - before.ok).toBe(0);
    const account = (await call(server.url, "GET", `/v1/accounts/${accountId}`, { key: alice.key })).body.data;
    expect(account.health).toBe("needs_reconnect");
    // The source's logs say it too, for its owner.
    const logs = await waitFor(() => logsOf(server, alice.key, sourceId), (lines) => lines.some((line) => line.includes("must be reconnected")), "the AuthError in the source's logs");
    expect(logs.join("\n")).not.toMatch(/being refreshed by another Runnel process/);
  }, 60_000);
});
