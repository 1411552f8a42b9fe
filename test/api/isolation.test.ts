import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

describe("isolation between users", () => {
  let server: TestServer;
  let alice: { id: string; key: string };
  let bob: { id: string; key: string };

  beforeAll(async () => {
    server = await startTestServer();
    alice = await createUser(server, "alice");
    bob = await createUser(server, "bob");
  });
  afterAll(() => server.close());

  it("shows each user only themselves", async () => {
    expect((await call(server.url, "GET", "/v1/users/me", { key: alice.key })).body.data.id).toBe(alice.id);
    expect((await call(server.url, "GET", "/v1/users/me", { key: bob.key })).body.data.id).toBe(bob.id);
  });

  it("lists only the caller's keys", async () => {
    const aliceKeys = await call(server.url, "GET", "/v1/users/me/api_keys", { key: alice.key });
    const bobKeys = await call(server.url, "GET", "/v1/users/me/api_keys", { key: bob.key });
    const aliceIds = aliceKeys.body.data.map((key: { id: string }) => key.id);
    const bobIds = bobKeys.body.data.map((key: { id: string }) => key.id);
    expect(aliceIds).toHaveLength(1);
    expect(bobIds).toHaveLength(1);
    expect(aliceIds).not.toContain(bobIds[0]);
  });

  it("answers 404, never 403, when one user touches another's key, and changes nothing", async () => {
    const aliceKeyId = (await call(server.url, "GET", "/v1/users/me/api_keys", { key: alice.key })).body.data[0].id;
    const attempt = await call(server.url, "DELETE", `/v1/users/me/api_keys/${aliceKeyId}`, { key: bob.key });
    expect(attempt.status).toBe(404);
    expect(attempt.body.error.code).toBe("NotFound");
    const missing = await call(server.url, "DELETE", "/v1/users/me/api_keys/ak_doesnotexist", { key: bob.key });
    expect(missing.status).toBe(404);
    expect(attempt.body.error.message.replace(aliceKeyId, "X")).toBe(missing.body.error.message.replace("ak_doesnotexist", "X"));
    expect((await call(server.url, "GET", "/v1/users/me", { key: alice.key })).status).toBe(200);
  });

  it("lets only admins create users", async () => {
    const attempt = await call(server.url, "POST", "/v1/users", { key: alice.key, json: { username: "mallory" } });
    expect(attempt.status).toBe(403);
    expect(attempt.body.error).toEqual({ code: "Forbidden", message: expect.stringMatching(/admin/) });
    const created = await call(server.url, "POST", "/v1/users", { key: server.adminKey, json: { username: "carol", admin: true } });
    expect(created.status).toBe(201);
    const carol = created.body.data;
    expect(carol).toMatchObject({ username: "carol", is_admin: true });
    const byCarol = await call(server.url, "POST", "/v1/users", { key: carol.api_key.key, json: { username: "dave" } });
    expect(byCarol.status).toBe(201);
  });
});
