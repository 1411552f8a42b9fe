import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf } from "../helpers/sources.js";

const ECHO = `module.exports = {
  name: "Echo", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) { this.$emit(event, { summary: event.method + " " + event.path }); },
};`;

const RESPONDER = `export default {
  name: "Responder", version: "1",
  props: { http: { type: "$.interface.http", customResponse: true } },
  async run(event) {
    const mode = event.query.mode;
    if (mode === "json") this.http.respond({ status: "201", headers: { "x-made-by": "runnel" }, body: { echoed: event.body } });
    else if (mode === "text") this.http.respond({ status: 202, body: "plain text" });
    else if (mode === "buffer") this.http.respond({ status: 200, headers: { "content-type": "application/octet-stream" }, body: Buffer.from([1, 2, 3]) });
    else if (mode === "bad-status") this.http.respond({ status: 700, body: "x" });
    else if (mode === "late") { this.http.respond({ status: 200, body: "early" }); await new Promise((r) => setTimeout(r, 300)); this.$emit({ after: true }); }
    else if (mode === "hang") await new Promise(() => {});
    // mode "none": finishes without responding
  },
};`;

describe("HTTP interface", () => {
  let server: TestServer;
  let echo: { id: string; endpoint_url: string };
  let responder: { id: string; endpoint_url: string };

  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_HTTP_TIMEOUT_SECONDS: "2" });
    echo = await deploySource(server, server.adminKey, { component_code: ECHO });
    responder = await deploySource(server, server.adminKey, { component_code: RESPONDER, filename: "responder.mjs" });
  });
  afterAll(() => server.close());

  it("gives the source an unguessable endpoint and answers 200 once the event is stored", async () => {
    expect(echo.endpoint_url).toMatch(new RegExp(`^${server.url}/e/[A-Za-z0-9_-]{20,}$`));
    const response = await fetch(`${echo.endpoint_url}/some/path?a=1&b=two`, { method: "POST", headers: { "content-type": "application/json", "x-custom": "yes" }, body: '{"hello":"world"}' });
    expect(response.status).toBe(200);
    const [event] = await eventsOf(server, server.adminKey, echo.id);
    expect(event.event).toMatchObject({ method: "POST", path: "/some/path", query: { a: "1", b: "two" }, bodyRaw: '{"hello":"world"}', body: { hello: "world" } });
    expect(event.event.headers["x-custom"]).toBe("yes");
    expect(event.metadata.summary).toBe("POST /some/path");
  });

  it.each([
    ["a form", "application/x-www-form-urlencoded", "a=1&a=2&b=3", { a: ["1", "2"], b: "3" }],
    ["text", "text/plain", "just words", "just words"],
    ["broken JSON", "application/json", "{nope", "{nope"],
  ])("parses %s bodies", async (_label, type, body, expected) => {
    await fetch(echo.endpoint_url, { method: "PUT", headers: { "content-type": type }, body });
    const [event] = await eventsOf(server, server.adminKey, echo.id);
    expect(event.event.body).toEqual(expected);
    expect(event.event.bodyRaw).toBe(body);
  });

  it("answers GET without a body", async () => {
    expect((await fetch(echo.endpoint_url)).status).toBe(200);
    const [event] = await eventsOf(server, server.adminKey, echo.id);
    expect(event.event).toMatchObject({ method: "GET", path: "/", bodyRaw: "" });
  });

  it("refuses bodies over 512 KB with 413 and stores nothing", async () => {
    const before = (await eventsOf(server, server.adminKey, echo.id)).length;
    const response = await fetch(echo.endpoint_url, { method: "POST", headers: { "content-type": "text/plain" }, body: "x".repeat(513 * 1024) });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("PayloadTooLarge");
    expect((await eventsOf(server, server.adminKey, echo.id)).length).toBe(before);
  });

  it("lets a source answer itself: status (numeric strings too), headers and JSON, text or binary bodies", async () => {
    const json = await fetch(`${responder.endpoint_url}?mode=json`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"x":1}' });
    expect(json.status).toBe(201);
    expect(json.headers.get("x-made-by")).toBe("runnel");
    expect(await json.json()).toEqual({ echoed: { x: 1 } });
    const text = await fetch(`${responder.endpoint_url}?mode=text`);
    expect(text.status).toBe(202);
    expect(await text.text()).toBe("plain text");
    const binary = await fetch(`${responder.endpoint_url}?mode=buffer`);
    expect([...new Uint8Array(await binary.arrayBuffer())]).toEqual([1, 2, 3]);
  });

  it("answers as soon as respond() is called, while the run goes on", async () => {
    const started = Date.now();
    const response = await fetch(`${responder.endpoint_url}?mode=late`);
    expect(await response.text()).toBe("early");
    expect(Date.now() - started).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = await eventsOf(server, server.adminKey, responder.id);
    expect(events[0].event).toEqual({ after: true });
  });

  it("answers a clear 5xx when the source responds wrongly, never, or too late", async () => {
    const bad = await fetch(`${responder.endpoint_url}?mode=bad-status`);
    expect(bad.status).toBe(502);
    expect(await bad.text()).toMatch(/status/);
    const none = await fetch(`${responder.endpoint_url}?mode=none`);
    expect(none.status).toBe(502);
    expect(((await none.json()) as { error: { message: string } }).error.message).toMatch(/respond/);
    const hang = await fetch(`${responder.endpoint_url}?mode=hang`);
    expect(hang.status).toBe(502);
    expect(((await hang.json()) as { error: { message: string } }).error.message).toMatch(/Timeout|time/i);
  });

  it("answers 404 for an unknown token and for an inactive source", async () => {
    expect((await fetch(`${server.url}/e/not-a-real-token`)).status).toBe(404);
    const source = await deploySource(server, server.adminKey, { component_code: ECHO, name: "paused" });
    await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { active: false } });
    expect((await fetch(source.endpoint_url, { method: "POST", body: "x" })).status).toBe(404);
    await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { active: true } });
    expect((await fetch(source.endpoint_url, { method: "POST", body: "x" })).status).toBe(200);
  });
});
