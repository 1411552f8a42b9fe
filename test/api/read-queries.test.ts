import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Clients of the hosted API send parameters Runnel does not use (org_id,
 * workspace_id, include, exclude…) on every call: a read ignores the query
 * parameters it does not know, a write still names them (issue 15).
 */
let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.close());

describe("query parameters a route does not know", () => {
  it("are ignored on reads, where the known ones still work", async () => {
    const listed = await call(server.url, "GET", "/v1/users/me/api_keys?project_id=proj_1&limit=1&utm=x", { key: server.adminKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect((await call(server.url, "GET", "/v1/users/me?template_id=t_1", { key: server.adminKey })).status).toBe(200);
    // A known parameter with a wrong value is still refused, naming it.
    expect((await call(server.url, "GET", "/v1/users/me/api_keys?limit=zero&utm=x", { key: server.adminKey })).body.error.details.field).toBe("limit");
  });

  it("are refused on writes, naming them", async () => {
    const refused = await call(server.url, "POST", "/v1/subscriptions?emitter_id=p_a&listener_id=p_b&evnt_name=x", { key: server.adminKey });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "ValidationError", details: { field: "evnt_name" } });
  });
});

describe("include and exclude", () => {
  it("keep or drop the fields of what a read answers, for one object and for each item of a list", async () => {
    const me = await call(server.url, "GET", "/v1/users/me?include=id,username", { key: server.adminKey });
    expect(me.status).toBe(200);
    expect(Object.keys(me.body.data).sort()).toEqual(["id", "username"]);
    const keys = await call(server.url, "GET", "/v1/users/me/api_keys?exclude=prefix,created_at", { key: server.adminKey });
    expect(keys.status).toBe(200);
    expect(keys.body.page_info).toBeDefined();
    for (const item of keys.body.data) {
      expect(item).not.toHaveProperty("prefix");
      expect(item).not.toHaveProperty("created_at");
      expect(item).toHaveProperty("id");
    }
  });
});

describe("the user's workspace", () => {
  it("is listed in /users/me and /users/me/workspaces, and org_id / workspace_id must name it", async () => {
    const me = await call(server.url, "GET", "/v1/users/me", { key: server.adminKey });
    expect(me.body.data.orgs).toEqual([{ id: expect.stringMatching(/^o_/), orgname: "admin", name: "admin", email: null }]);
    const own = me.body.data.orgs[0].id as string;
    expect((await call(server.url, "GET", "/v1/users/me/workspaces", { key: server.adminKey })).body.data).toEqual(me.body.data.orgs);
    expect((await call(server.url, "GET", `/v1/users/me/api_keys?org_id=${own}`, { key: server.adminKey })).status).toBe(200);
    const other = await call(server.url, "GET", "/v1/users/me/api_keys?workspace_id=o_someoneelse00000000000000", { key: server.adminKey });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("NotFound");
    // In a JSON body too: the own one is accepted by a strict body, another is a 404.
    expect((await call(server.url, "POST", "/v1/users/me/api_keys", { key: server.adminKey, json: { name: "from a client", org_id: own } })).status).toBe(201);
    expect((await call(server.url, "POST", "/v1/users/me/api_keys", { key: server.adminKey, json: { name: "x", org_id: "o_nope" } })).status).toBe(404);
  });
});
