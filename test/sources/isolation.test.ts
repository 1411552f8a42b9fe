import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";

const CODE = `module.exports = { name: "Mine", version: "1", props: { http: "$.interface.http", db: "$.service.db", secret: { type: "string", secret: true } },
  async run(e) { this.db.set("last", e.body); this.$emit({ got: e.body }); } };`;

describe("sources of two users", () => {
  let server: TestServer;
  let alice: { key: string };
  let bob: { key: string };
  let aliceSource: any;

  beforeAll(async () => {
    server = await startTestServer();
    alice = await createUser(server, "alice");
    bob = await createUser(server, "bob");
    aliceSource = await deploySource(server, alice.key, { component_code: CODE, name: "shared name", configured_props: { secret: "alice-only" } });
  });
  afterAll(() => server.close());

  it("lets each user use the same names", async () => {
    const bobSource = await deploySource(server, bob.key, { component_code: CODE, name: "shared name", configured_props: { secret: "bob" } });
    expect(bobSource.name_slug).toBe(aliceSource.name_slug);
    expect((await call(server.url, "GET", "/v1/sources/shared-name", { key: bob.key })).body.data.id).toBe(bobSource.id);
  });

  it.each([
    ["GET", ""],
    ["PUT", ""],
    ["DELETE", ""],
    ["GET", "/event_summaries"],
    ["DELETE", "/events"],
    ["GET", "/logs"],
    ["GET", "/sse"],
    ["POST", "/run"],
    ["POST", "/props/secret/options"],
  ])("answers %s /v1/sources/<another user's id>%s with 404", async (method, suffix) => {
    const response = await call(server.url, method, `/v1/sources/${aliceSource.id}${suffix}`, { key: bob.key, ...(method === "GET" || method === "DELETE" ? {} : { json: {} }) });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("NotFound");
  });

  it("does not show another user's component", async () => {
    expect((await call(server.url, "GET", `/v1/components/${aliceSource.component_id}`, { key: bob.key })).status).toBe(404);
    const list = await call(server.url, "GET", "/v1/users/me/sources", { key: bob.key });
    expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(aliceSource.id);
  });

  it("left alice's source untouched", async () => {
    const response = await call(server.url, "GET", `/v1/sources/${aliceSource.id}`, { key: alice.key });
    expect(response.status).toBe(200);
    expect(response.body.data.active).toBe(true);
  });
});
