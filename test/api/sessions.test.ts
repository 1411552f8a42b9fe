import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sessions, SESSION_IDLE_MS } from "../../src/engine/sessions.js";
import { deploySource } from "../helpers/sources.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

/** The runnel_session value a response sets, or null. */
function sessionCookieOf(headers: Headers): string | null {
  const match = /runnel_session=([^;]*)/.exec(headers.get("set-cookie") ?? "");
  return match?.[1] || null;
}

const ECHO = `module.exports = {
  name: "Echo", version: "0.1.0",
  props: { http: { type: "$.interface.http" } },
  async run(event) { this.$emit({ path: event.path }, { summary: "got " + event.path }); this.http.respond({ status: 200, body: "from the source" }); },
};`;

describe("console sessions (POST /v1/sessions, the session cookie, sign-in links)", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  async function signIn(apiKey: string): Promise<string> {
    const response = await call(server.url, "POST", "/v1/sessions", { json: { api_key: apiKey } });
    expect(response.status).toBe(201);
    const cookie = sessionCookieOf(response.headers);
    if (!cookie) throw new Error("no session cookie set");
    return cookie;
  }

  const withCookie = (cookie: string, extra: Record<string, string> = {}) => ({ headers: { cookie: `other=1; runnel_session=${cookie}`, ...extra } });

  it("exchanges an API key for an HttpOnly, SameSite=Strict cookie that authenticates /v1 like the key", async () => {
    const response = await call(server.url, "POST", "/v1/sessions", { json: { api_key: server.adminKey } });
    expect(response.status).toBe(201);
    expect(response.body.data.user.username).toBe("admin");
    expect(response.body.data.user.orgs).toHaveLength(1);
    const expiresAt = Date.parse(response.body.data.expires_at);
    expect(expiresAt).toBeGreaterThan(Date.now() + 29 * 24 * 3600 * 1000);
    const setCookie = response.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^runnel_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/");
    // The server is plain http here: a Secure cookie would never come back.
    expect(setCookie).not.toContain("Secure");
    // The key is not echoed anywhere in the answer.
    expect(JSON.stringify(response.body)).not.toContain(server.adminKey);

    const me = await call(server.url, "GET", "/v1/users/me", withCookie(sessionCookieOf(response.headers)!));
    expect(me.status).toBe(200);
    expect(me.body.data.username).toBe("admin");
  });

  it("answers a wrong, malformed or missing key with 401 and a message saying what to do", async () => {
    const wrong = await call(server.url, "POST", "/v1/sessions", { json: { api_key: `rnl_${"x".repeat(43)}` } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toMatch(/not valid/);
    expect(sessionCookieOf(wrong.headers)).toBeNull();

    const malformed = await call(server.url, "POST", "/v1/sessions", { json: { api_key: "hunter2" } });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error.message).toMatch(/not an API key/);

    const neither = await call(server.url, "POST", "/v1/sessions", { json: {} });
    expect(neither.status).toBe(400);
    expect(neither.body.error.details.field).toBe("api_key");

    const both = await call(server.url, "POST", "/v1/sessions", { json: { api_key: server.adminKey, sign_in_token: "x" } });
    expect(both.status).toBe(400);

    const noCookie = await call(server.url, "GET", "/v1/users/me", { headers: { cookie: "runnel_session=not-a-session" } });
    expect(noCookie.status).toBe(401);
    expect(noCookie.body.error.message).toMatch(/Sign in again/);
  });

  it("refuses a sign-in posted from another site", async () => {
    const response = await call(server.url, "POST", "/v1/sessions", { json: { api_key: server.adminKey }, headers: { origin: "https://evil.example" } });
    expect(response.status).toBe(403);
    expect(sessionCookieOf(response.headers)).toBeNull();
    const own = await call(server.url, "POST", "/v1/sessions", { json: { api_key: server.adminKey }, headers: { origin: server.url } });
    expect(own.status).toBe(201);
  });

  it("requires a cookie's unsafe requests to come from the server's own origin (Origin, else Referer)", async () => {
    const cookie = await signIn(server.adminKey);
    const noOrigin = await call(server.url, "POST", "/v1/users/me/api_keys", { json: { name: "x" }, ...withCookie(cookie) });
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.body.error.message).toMatch(/Origin/);

    const foreign = await call(server.url, "POST", "/v1/users/me/api_keys", { json: { name: "x" }, ...withCookie(cookie, { origin: "http://127.0.0.1:1" }) });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toContain("http://127.0.0.1:1");

    const foreignReferer = await call(server.url, "POST", "/v1/users/me/api_keys", { json: { name: "x" }, ...withCookie(cookie, { referer: "https://evil.example/page" }) });
    expect(foreignReferer.status).toBe(403);

    const own = await call(server.url, "POST", "/v1/users/me/api_keys", { json: { name: "from the console" }, ...withCookie(cookie, { origin: server.url }) });
    expect(own.status).toBe(201);
    const ownReferer = await call(server.url, "POST", "/v1/users/me/api_keys", { json: { name: "from the console 2" }, ...withCookie(cookie, { referer: `${server.url}/settings` }) });
    expect(ownReferer.status).toBe(201);

    // Safe methods need no Origin: an EventSource or a link sends none.
    const read = await call(server.url, "GET", "/v1/users/me/api_keys", withCookie(cookie));
    expect(read.status).toBe(200);
    // A Bearer key is unaffected: scripts send no Origin.
    const bearer = await call(server.url, "POST", "/v1/users/me/api_keys", { key: server.adminKey, json: { name: "script" } });
    expect(bearer.status).toBe(201);
  });

  it("authenticates the /sse streams and a source's streams with the cookie", async () => {
    const cookie = await signIn(server.adminKey);
    const source = await deploySource(server, server.adminKey, { component_code: ECHO, name: "session-echo" });
    const controller = new AbortController();
    const stream = await fetch(`${server.url}/v1/sources/${source.id}/sse`, { headers: { cookie: `runnel_session=${cookie}` }, signal: controller.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    controller.abort();
    const documented = await fetch(`${server.url}/sse/${source.id}/emits`, { headers: { cookie: `runnel_session=${cookie}` } });
    expect(documented.status).toBe(200);
    await documented.body?.cancel();
    const refused = await call(server.url, "GET", `/sse/${source.id}/emits`, { headers: { cookie: "runnel_session=wrong" } });
    expect(refused.status).toBe(401);
  });

  it("signs out: DELETE /v1/sessions/current ends the session server-side and clears the cookie", async () => {
    const cookie = await signIn(server.adminKey);
    const out = await call(server.url, "DELETE", "/v1/sessions/current", withCookie(cookie, { origin: server.url }));
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^runnel_session=; .*Max-Age=0/);
    const after = await call(server.url, "GET", "/v1/users/me", withCookie(cookie));
    expect(after.status).toBe(401);
  });

  it("ends a user's sessions when the API key they signed in with is revoked", async () => {
    const user = await createUser(server, "revoked-session");
    const cookie = await signIn(user.key);
    expect((await call(server.url, "GET", "/v1/users/me", withCookie(cookie))).status).toBe(200);
    const keys = await call(server.url, "GET", "/v1/users/me/api_keys", { key: user.key });
    const revoked = await call(server.url, "DELETE", `/v1/users/me/api_keys/${keys.body.data[0].id}`, { key: user.key });
    expect(revoked.status).toBe(204);
    const after = await call(server.url, "GET", "/v1/users/me", withCookie(cookie));
    expect(after.status).toBe(401);
    expect(after.body.error.message).toMatch(/revoked/);
  });

  it("makes one-time sign-in links that work once", async () => {
    const made = await call(server.url, "POST", "/v1/sessions/links", { key: server.adminKey });
    expect(made.status).toBe(201);
    expect(made.body.data.url).toMatch(new RegExp(`^${server.url.replace(/[.:/]/g, "\\$&")}/sign-in#token=[A-Za-z0-9_-]{43}$`));
    const lifetime = Date.parse(made.body.data.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(50_000);
    expect(lifetime).toBeLessThanOrEqual(60_000);
    const token = new URL(made.body.data.url).hash.slice("#token=".length);

    const first = await call(server.url, "POST", "/v1/sessions", { json: { sign_in_token: token } });
    expect(first.status).toBe(201);
    expect(first.body.data.user.username).toBe("admin");
    const cookie = sessionCookieOf(first.headers)!;
    expect((await call(server.url, "GET", "/v1/users/me", withCookie(cookie))).status).toBe(200);

    const second = await call(server.url, "POST", "/v1/sessions", { json: { sign_in_token: token } });
    expect(second.status).toBe(401);
    expect(second.body.error.message).toMatch(/already used, has expired/);
    // A link is not a session: its token is no cookie.
    expect((await call(server.url, "GET", "/v1/users/me", { headers: { cookie: `runnel_session=${token}` } })).status).toBe(401);
    // Making links needs authentication.
    expect((await call(server.url, "POST", "/v1/sessions/links")).status).toBe(401);
  });

  it("lets a link expire after a minute and a session after a week idle (the store's clock moved on)", async () => {
    const { store, engine } = server.server;
    const made = await call(server.url, "POST", "/v1/sessions/links", { key: server.adminKey });
    const token = new URL(made.body.data.url).hash.slice("#token=".length);
    const later = new Sessions({ store, accounts: engine.accounts, now: () => Date.now() + 61_000 });
    await expect(later.startWithSignInToken(token)).rejects.toThrow(/has expired/);

    const cookie = await signIn(server.adminKey);
    const weekLater = new Sessions({ store, accounts: engine.accounts, now: () => Date.now() + SESSION_IDLE_MS + 1000 });
    await expect(weekLater.authenticate(cookie)).rejects.toThrow(/expired/);
    // Expired means gone, for the server too.
    expect((await call(server.url, "GET", "/v1/users/me", withCookie(cookie))).status).toBe(401);
  });

  it("documents the routes in the OpenAPI document", async () => {
    const document = await call(server.url, "GET", "/v1/openapi.json");
    expect(document.status).toBe(200);
    expect(Object.keys(document.body.paths)).toEqual(expect.arrayContaining(["/v1/sessions", "/v1/sessions/current", "/v1/sessions/links"]));
    expect(document.body.paths["/v1/sessions"].post.requestBody.content["application/json"].schema.properties).toHaveProperty("sign_in_token");
    // Signing in needs no key; the cookie is a documented way to authenticate.
    expect(document.body.paths["/v1/sessions"].post.security).toEqual([]);
    expect(document.body.components.securitySchemes.cookieAuth).toEqual({ type: "apiKey", in: "cookie", name: "runnel_session" });
  });
});

describe("console sessions behind an https public URL", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_PUBLIC_URL: "https://runnel.example.com" });
  });
  afterAll(async () => {
    await server.close();
  });

  it("marks the cookie Secure, accepts the public origin and makes links on the public URL", async () => {
    const response = await call(server.url, "POST", "/v1/sessions", { json: { api_key: server.adminKey }, headers: { origin: "https://runnel.example.com" } });
    expect(response.status).toBe(201);
    expect(response.headers.get("set-cookie")).toContain("; Secure");
    const link = await call(server.url, "POST", "/v1/sessions/links", { key: server.adminKey });
    expect(link.body.data.url).toMatch(/^https:\/\/runnel\.example\.com\/sign-in#token=/);
  });
});
