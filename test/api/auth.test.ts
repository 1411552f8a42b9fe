import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

describe("API authentication", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("answers the admin key with the admin user", async () => {
    const me = await call(server.url, "GET", "/v1/users/me", { key: server.adminKey });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ username: "admin", is_admin: true, email: null });
    expect(me.body.data.id).toMatch(/^u_[0-9a-z]{26}$/);
  });

  it("refuses a request without a key", async () => {
    const response = await call(server.url, "GET", "/v1/users/me");
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe("Unauthorized");
    expect(response.body.error.message).toMatch(/Authorization: Bearer/);
  });

  it.each([
    ["a header that is not Bearer", { authorization: "Basic YWRtaW46YWRtaW4=" }],
    ["a key of the wrong form", { authorization: "Bearer not-a-key" }],
    ["a well-formed key that does not exist", { authorization: `Bearer rnl_${"A".repeat(43)}` }],
  ])("refuses %s", async (_label, headers) => {
    const response = await call(server.url, "GET", "/v1/users/me", { headers });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: { code: "Unauthorized", message: expect.any(String) } });
  });

  it("refuses a revoked key, and only that key", async () => {
    const user = await createUser(server, "revoker");
    const second = await call(server.url, "POST", "/v1/users/me/api_keys", { key: user.key, json: { name: "laptop" } });
    expect(second.status).toBe(201);
    const laptopKey: string = second.body.data.key;

    const revoked = await call(server.url, "DELETE", `/v1/users/me/api_keys/${second.body.data.id}`, { key: user.key });
    expect(revoked.status).toBe(204);

    const refused = await call(server.url, "GET", "/v1/users/me", { key: laptopKey });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/revoked/);
    expect((await call(server.url, "GET", "/v1/users/me", { key: user.key })).status).toBe(200);
  });

  it("refuses a key that revoked itself on its next request", async () => {
    const user = await createUser(server, "self-revoker");
    const keys = await call(server.url, "GET", "/v1/users/me/api_keys", { key: user.key });
    const revoked = await call(server.url, "DELETE", `/v1/users/me/api_keys/${keys.body.data[0].id}`, { key: user.key });
    expect(revoked.status).toBe(204);
    expect((await call(server.url, "GET", "/v1/users/me", { key: user.key })).status).toBe(401);
  });

  it("needs no key for /healthz and the OpenAPI document", async () => {
    expect((await call(server.url, "GET", "/healthz")).body).toMatchObject({ status: "ok", store: "sqlite" });
    expect((await call(server.url, "GET", "/v1/openapi.json")).status).toBe(200);
  });
});
