import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SecretBox } from "../../src/engine/secrets.js";
import { openStore } from "../../src/store/open-store.js";
import { runCli } from "../helpers/child.js";
import { call, createUser, startTestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";

/**
 * Connected accounts and OAuth clients survive the master key's rotation
 * (re-sealed with the others, the old key opens none of them), and an OAuth
 * client can come from the environment for unattended set-ups.
 */
const KEY_SOURCE = `export default defineComponent({ name: "Key length", version: "0.0.1",
  props: { openai: { type: "app", app: "openai", methods: { key() { return this.$auth.api_key; } } }, http: { type: "$.interface.http", customResponse: true } },
  run() { this.http.respond({ status: 200, body: { ok: this.openai.key() === "sk-rotate-me-123" } }); } })`;

describe("the master key's rotation", () => {
  it("re-seals connected accounts' fields and OAuth clients' secrets", async () => {
    const first = await startTestServer({}, { keepData: true });
    const { dataDir } = first;
    let source: any;
    try {
      const user = await createUser(first, "rita");
      const account = await call(first.url, "POST", "/v1/accounts", { key: user.key, json: { app: "openai", name: "main", fields: { api_key: "sk-rotate-me-123" } } });
      expect(account.status).toBe(201);
      expect((await call(first.url, "PUT", "/v1/apps/github/oauth_client", { key: first.adminKey, json: { client_id: "Iv1.rotate", client_secret: "gh-client-secret-rotate" } })).status).toBe(200);
      expect((await call(first.url, "PUT", "/v1/apps/github/oauth_client", { key: user.key, json: { client_id: "x", client_secret: "y" } })).status).toBe(403);
      source = await deploySource(first, user.key, { component_code: KEY_SOURCE, filename: "key.mjs", configured_props: { openai: { authProvisionId: account.body.data.id } } });
    } finally {
      await first.close();
    }
    const oldKey = Buffer.from((await readFile(join(dataDir, "master-key"), "utf8")).trim(), "hex");
    const rotated = await runCli(["admin", "rotate-master-key", "--data-dir", dataDir], { env: {} });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stderr).toContain("1 connected account and 1 OAuth client with a new master key");
    const newKey = Buffer.from((await readFile(join(dataDir, "master-key"), "utf8")).trim(), "hex");

    const store = await openStore({ databaseUrl: null, dataDir });
    try {
      const client = await store.findOAuthClient("github");
      expect(() => new SecretBox(oldKey).open(client!.sealedSecret)).toThrow();
      expect(new SecretBox(newKey).open(client!.sealedSecret)).toBe("gh-client-secret-rotate");
    } finally {
      await store.close();
    }

    const second = await startTestServer({}, { dataDir, keepData: true });
    try {
      const answer = await fetch(source.endpoint_url.replace(/^http:\/\/127\.0\.0\.1:\d+/, second.url), { method: "POST", body: "{}" });
      expect(await answer.json()).toEqual({ ok: true });
    } finally {
      await second.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("an OAuth client from the environment", () => {
  it("is shown as such (never its secret) and used to start a connection; one set through the API wins", async () => {
    const server = await startTestServer({ RUNNEL_OAUTH_GITLAB_CLIENT_ID: "gl-env-id", RUNNEL_OAUTH_GITLAB_CLIENT_SECRET: "gl-env-secret", RUNNEL_PUBLIC_URL: "https://runnel.example.com" });
    try {
      const user = await createUser(server, "eve");
      const app = await call(server.url, "GET", "/v1/apps/gitlab", { key: user.key });
      expect(app.body.data.oauth_client).toEqual({ client_id: "gl-env-id", source: "environment" });
      expect(JSON.stringify(app.body)).not.toContain("gl-env-secret");
      const started = await call(server.url, "POST", "/v1/accounts/oauth/start", { key: user.key, json: { app: "gitlab", name: "work" } });
      // Runnel's own confirm page first (at its public address), which then sends the browser on to GitLab.
      const confirm = new URL(started.body.data.authorization_url);
      expect(`${confirm.origin}${confirm.pathname}`).toBe("https://runnel.example.com/oauth/authorize");
      const confirmed = await fetch(`${server.url}/oauth/authorize`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: "https://runnel.example.com", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ state: confirm.searchParams.get("state")! }).toString(),
      });
      expect(confirmed.status).toBe(303);
      const url = new URL(confirmed.headers.get("location")!);
      expect(`${url.origin}${url.pathname}`).toBe("https://gitlab.com/oauth/authorize");
      expect(Object.fromEntries(url.searchParams)).toMatchObject({ response_type: "code", client_id: "gl-env-id", redirect_uri: "https://runnel.example.com/oauth/callback", scope: "read_user api", code_challenge_method: "S256" });
      // The public address is https: the binding cookie is Secure.
      expect(confirmed.headers.getSetCookie().join("\n")).toContain("; Secure");
      expect(JSON.stringify(started.body)).not.toContain("gl-env-secret");

      await call(server.url, "PUT", "/v1/apps/gitlab/oauth_client", { key: server.adminKey, json: { client_id: "gl-api-id", client_secret: "gl-api-secret" } });
      expect((await call(server.url, "GET", "/v1/apps/gitlab", { key: user.key })).body.data.oauth_client).toEqual({ client_id: "gl-api-id", source: "api" });
      // A key-based app has no client to set.
      const keys = await call(server.url, "PUT", "/v1/apps/stripe/oauth_client", { key: server.adminKey, json: { client_id: "a", client_secret: "b" } });
      expect(keys.status).toBe(400);
      expect(keys.body.error.message).toMatch(/Stripe connects with keys, not OAuth/);
    } finally {
      await server.close();
    }
  });
});
