import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";
import { openStream } from "../helpers/sse.js";

describe("error bodies", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  const post = (rawBody: string, headers: Record<string, string> = {}) =>
    call(server.url, "POST", "/v1/users", { key: server.adminKey, rawBody, headers });

  it.each([
    ["truncated JSON", '{"username": "x",'],
    ["not JSON at all", "username=x"],
    ["an empty body", ""],
  ])("answers %s with 400 MalformedBody, never 500", async (_label, body) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("MalformedBody");
    expect(response.body.error.message).toMatch(/JSON/);
  });

  it.each([
    ['{"username": 5}', "username"],
    ["{}", "username"],
    ['{"username": "ok", "colour": "red"}', "colour"],
    ['{"username": "ok", "email": "not-an-address"}', "email"],
    ['{"username": "Not Valid!"}', "username"],
    ['{"username": "ok", "admin": "yes please"}', "admin"],
  ])("names the bad field of %s (%s)", async (body, field) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("ValidationError");
    expect(response.body.error.details.field).toBe(field);
    expect(response.body.error.message).toContain(field);
  });

  it("names a bad paging parameter", async () => {
    const response = await call(server.url, "GET", "/v1/users/me/api_keys?limit=0", { key: server.adminKey });
    expect(response.status).toBe(400);
    expect(response.body.error.details.field).toBe("limit");
    // Over the maximum is taken as the maximum, as the hosted API answers.
    expect((await call(server.url, "GET", "/v1/users/me/api_keys?limit=500", { key: server.adminKey })).status).toBe(200);
    const both = await call(server.url, "GET", "/v1/users/me/api_keys?before=a&after=b", { key: server.adminKey });
    expect(both.status).toBe(400);
    expect(both.body.error.details.field).toBe("before");
  });

  it("answers a taken username with 409", async () => {
    expect((await post('{"username": "twin"}')).status).toBe(201);
    const again = await post('{"username": "twin"}');
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "Conflict", message: expect.stringContaining("twin") });
  });

  it("answers unknown routes with a JSON 404, with or without a key", async () => {
    for (const key of [server.adminKey, undefined]) {
      const response = await call(server.url, "GET", "/v1/nothing/here?x=1", key ? { key } : {});
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("NotFound");
      expect(response.body.error.message).toContain("/v1/nothing/here");
    }
    expect((await call(server.url, "GET", "/elsewhere")).body.error.code).toBe("NotFound");
    // Clients that send Content-Type: application/json on every request, with no body or a broken one, get the 404 too.
    for (const rawBody of [undefined, "{"]) {
      const response = await fetch(`${server.url}/v1/nothing/here`, { method: "POST", headers: { authorization: `Bearer ${server.adminKey}`, "content-type": "application/json" }, body: rawBody });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("NotFound");
    }
  });

  it("answers a body over the limit with 413", async () => {
    const huge = JSON.stringify({ username: "x".repeat(6 * 1024 * 1024) });
    const response = await post(huge);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe("PayloadTooLarge");
  });

  it("answers a body that is not JSON by type with 415", async () => {
    const response = await post("username: x", { "content-type": "text/yaml" });
    expect(response.status).toBe(415);
    expect(response.body.error.code).toBe("UnsupportedMediaType");
  });

  it("keeps serving after all of the above", async () => {
    expect((await call(server.url, "GET", "/v1/users/me", { key: server.adminKey })).status).toBe(200);
  });
});

describe("rate limiting", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer({ RUNNEL_RATE_LIMIT_PER_MINUTE: "3" })));
  afterAll(() => server.close());

  it("answers 429 with the JSON error body once a key passes its limit", async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await call(server.url, "GET", "/v1/users/me", { key: server.adminKey });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(last!.body.error.code).toBe("RateLimited");
    expect(last!.body.error.details.retry_after_seconds).toBeGreaterThan(0);
    expect(last!.headers.get("retry-after")).not.toBeNull();
  });
});

describe("rate limiting of the stream addresses outside /v1", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer({ RUNNEL_RATE_LIMIT_PER_MINUTE: "3" })));
  afterAll(() => server.close());

  const SOURCE = `module.exports = { name: "limited", version: "0.1.0", props: { http: { type: "$.interface.http" } }, run(event) { this.$emit(event.body); } };`;

  it("counts /sse/<id>/… streams against the key's one budget with /v1, and answers 429 past it", async () => {
    const { key } = await createUser(server, "streamer");
    // 1 of 3: a /v1 request.
    const source = await deploySource(server, key, { component_code: SOURCE, name: "limited" });
    // 2 and 3 of 3: the two stream addresses.
    const statuses: number[] = [];
    for (const path of [`/sse/${source.id}/emits`, `/sse/${source.id}/observations`]) {
      const stream = await openStream(`${server.url}${path}`, key);
      statuses.push(stream.status);
      await stream.close();
    }
    expect(statuses).toEqual([200, 200]);
    // Past the budget: a stream is refused in the API's error shape, and so is /v1, which shares the count.
    const refused = await call(server.url, "GET", `/sse/${source.id}/emits`, { key });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("RateLimited");
    expect(refused.body.error.details.retry_after_seconds).toBeGreaterThan(0);
    expect((await call(server.url, "GET", "/v1/users/me", { key })).status).toBe(429);
    // Another key has its own budget.
    expect((await call(server.url, "GET", "/v1/users/me", { key: server.adminKey })).status).toBe(200);
  });
});
