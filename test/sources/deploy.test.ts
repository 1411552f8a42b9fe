import { SqliteDatabaseClass as Database } from "../../src/store/sqlite/sqlite-binding.js";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf } from "../helpers/sources.js";

const CJS = `module.exports = {
  name: "Counter CJS",
  version: "0.1.0",
  props: { db: "$.service.db", step: { type: "integer", min: 1, max: 10, default: 1, optional: true }, token: { type: "string", secret: true } },
  methods: { next() { const n = (this.db.get("n") ?? 0) + this.step; this.db.set("n", n); return n; } },
  async run() { this.$emit({ n: this.next(), tokenLength: this.token.length }, { summary: "tick" }); },
};`;

const ESM = `export default {
  key: "counter-esm",
  name: "Counter ESM",
  version: "0.2.0",
  props: { label: { type: "string", options: ["a", "b"] } },
  async run(event) { this.$emit({ label: this.label, event }); },
};`;

const TS = `interface Payload { label: string }
export default defineComponent({
  name: "Counter TS",
  version: "0.3.0",
  props: { label: { type: "string", label: "Label", description: "What to say" } },
  async run(): Promise<void> { const payload: Payload = { label: this.label }; this.$emit(payload); },
});`;

describe("deploying sources through the API", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("gives deploys of one name at the same time a slug each, rather than refusing all but one", async () => {
    const code = (n: number) => ESM.replace('key: "counter-esm",', "").replace('name: "Counter ESM"', 'name: "Same Name"').replace("this.label", `this.label + ${n}`);
    const answers = await Promise.all([1, 2, 3, 4].map((n) => call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: code(n), filename: "same.mjs", configured_props: { label: "a" } } })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.body.data.name_slug)).size).toBe(4);
  });

  it.each([
    ["CommonJS", { component_code: CJS, configured_props: { token: "s3cret-value", step: 2 } }, "counter-cjs"],
    ["an ES module", { component_code: ESM, filename: "counter.mjs", configured_props: { label: "a" } }, "counter-esm"],
    ["TypeScript using defineComponent without an import", { component_code: TS, filename: "counter.ts", configured_props: { label: "x" } }, "counter-ts"],
  ])("deploys %s and runs it", async (_kind, body, slug) => {
    const source = await deploySource(server, server.adminKey, body);
    expect(source.id).toMatch(/^dc_/);
    expect(source.name_slug).toBe(slug);
    const run = await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    expect(run.status).toBe(200);
    expect(run.body.data.ok).toBe(true);
    expect(run.body.data.events).toHaveLength(1);
  });

  it("keeps state in the key-value store between runs and reads props and methods through this", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: CJS, name: "counter two", configured_props: { token: "abc", step: 3 } });
    for (let i = 0; i < 3; i++) await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    const events = await eventsOf(server, server.adminKey, source.id);
    expect(events.map((e) => e.event.n)).toEqual([9, 6, 3]);
    expect(events[0].event.tokenLength).toBe(3);
  });

  it("never echoes a secret prop and stores it encrypted", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: CJS, name: "secretive", configured_props: { token: "very-secret-token-42" } });
    expect(JSON.stringify(source)).not.toContain("very-secret-token-42");
    expect(source.configured_props.token).toBeUndefined();
    const database = new Database(join(server.dataDir, "runnel.sqlite"), { readonly: true });
    const row = database.prepare("SELECT configured_props FROM sources WHERE id = ?").get(source.id) as { configured_props: string };
    database.close();
    expect(row.configured_props).not.toContain("very-secret-token-42");
    expect(JSON.parse(row.configured_props).token).toMatch(/^enc:v1:/);

    // An update that leaves the secret out keeps it: clients never get it back to send again.
    const updated = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { configured_props: { step: 5 } } });
    expect(updated.status).toBe(200);
    const run = await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    expect(run.body.data.events[0].event).toEqual({ n: 5, tokenLength: "very-secret-token-42".length });
  });

  it("gives names unique slugs, counting up", async () => {
    const first = await deploySource(server, server.adminKey, { component_code: ESM, name: "Twin", configured_props: { label: "a" } });
    const second = await deploySource(server, server.adminKey, { component_code: ESM, name: "Twin", configured_props: { label: "b" } });
    const third = await deploySource(server, server.adminKey, { component_code: ESM, name: "Twin", configured_props: { label: "b" } });
    expect([first.name_slug, second.name_slug, third.name_slug]).toEqual(["twin", "twin-1", "twin-2"]);
    const bySlug = await call(server.url, "GET", "/v1/sources/twin-1", { key: server.adminKey });
    expect(bySlug.body.data.id).toBe(second.id);
  });

  it("saves a component and describes its configurable props", async () => {
    const saved = await call(server.url, "POST", "/v1/components", { key: server.adminKey, json: { component_code: TS, filename: "c.ts" } });
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({ name: "Counter TS", version: "0.3.0", type: "source" });
    expect(saved.body.data.configurable_props).toEqual([{ name: "label", type: "string", label: "Label", description: "What to say" }]);
    const byId = await call(server.url, "GET", `/v1/components/${saved.body.data.id}`, { key: server.adminKey });
    expect(byId.body.data.id).toBe(saved.body.data.id);
    const deployed = await deploySource(server, server.adminKey, { component_id: saved.body.data.id, configured_props: { label: "z" } });
    expect(deployed.component_id).toBe(saved.body.data.id);
  });

  it.each([
    ["no name", "module.exports = { version: '1', run() {} }", "name"],
    ["no version", "module.exports = { name: 'x', run() {} }", "version"],
    ["no run", "module.exports = { name: 'x', version: '1' }", "run"],
    ["an unknown type", "module.exports = { name: 'x', version: '1', type: 'trigger', run() {} }", "type"],
    ["an unknown dedupe", "module.exports = { name: 'x', version: '1', dedupe: 'first', run() {} }", "dedupe"],
    ["hooks on an action", "module.exports = { name: 'x', version: '1', type: 'action', hooks: { deploy() {} }, run() {} }", "hooks"],
    ["an unknown prop type", "module.exports = { name: 'x', version: '1', props: { a: { type: 'strng' } }, run() {} }", "props.a.type"],
    ["[] on a type without arrays", "module.exports = { name: 'x', version: '1', props: { a: { type: 'object[]' } }, run() {} }", "props.a.type"],
    ["a default that does not fit its type", "module.exports = { name: 'x', version: '1', props: { a: { type: 'integer', default: 'd' } }, run() {} }", "props.a.default"],
    ["secret on a non-string", "module.exports = { name: 'x', version: '1', props: { a: { type: 'integer', secret: true } }, run() {} }", "props.a.secret"],
    ["min on a non-integer", "module.exports = { name: 'x', version: '1', props: { a: { type: 'string', min: 1 } }, run() {} }", "props.a.min"],
  ])("refuses a component with %s, naming %s", async (_label, code, field) => {
    const response = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: code } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("ValidationError");
    expect(response.body.error.details.field).toBe(field);
  });

  it("allows a timer source without run (a plain schedule)", async () => {
    const code = "module.exports = { name: 'schedule', version: '1', props: { timer: { type: '$.interface.timer', default: { intervalSeconds: 3600 } } } }";
    const source = await deploySource(server, server.adminKey, { component_code: code });
    expect(source.configured_props.timer).toEqual({ cron: null, interval_seconds: 3600 });
    const run = await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    expect(run.body.data.events[0].event).toMatchObject({ interval_seconds: 3600, timestamp: expect.any(Number) });
  });

  it("names the line and column of a syntax error", async () => {
    const response = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: "module.exports = {\n  name: 'x',,\n}" } });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toMatchObject({ field: "component_code", line: 2 });
    expect(response.body.error.message).toMatch(/line 2, column \d+/);
  });

  it.each([
    [{ label: "c" }, "configured_props.label"],
    [{}, "configured_props.label"],
    [{ label: "a", extra: 1 }, "configured_props.extra"],
    [{ label: "x".repeat(70 * 1024) }, "configured_props.label"],
  ])("refuses configured props %#, naming %s", async (configured, field) => {
    const response = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: ESM, configured_props: configured } });
    expect(response.status).toBe(400);
    expect(response.body.error.details.field).toBe(field);
  });

  it("refuses to deploy an action", async () => {
    const response = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: "module.exports = { name: 'a', version: '1', type: 'action', run() {} }" } });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/action/);
  });

  it("lists, updates and deletes, keeping the id", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: ESM, name: "lifecycle", configured_props: { label: "a" } });
    const updated = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { name: "renamed", configured_props: { label: "b" } } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: source.id, name: "renamed", name_slug: "renamed", configured_props: { label: "b" } });
    const list = await call(server.url, "GET", "/v1/users/me/sources?limit=100", { key: server.adminKey });
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(source.id);
    expect((await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey })).status).toBe(204);
    expect((await call(server.url, "GET", `/v1/sources/${source.id}`, { key: server.adminKey })).status).toBe(404);
  });
});
