import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf } from "../helpers/sources.js";

/** A component whose hooks and run report to a recorder over HTTP, so the order is seen from outside. */
function recordingComponent(version: string, options: { failOn?: string } = {}): string {
  return `module.exports = {
  name: "Hooked",
  version: "${version}",
  props: { recorder: { type: "string" }, db: "$.service.db" },
  hooks: {
    async deploy() { await this.report("deploy"); this.db.set("deployed", true); this.$emit({ hook: "deploy" }); },
    async activate() { await this.report("activate"); this.$emit({ hook: "activate", deployed: this.db.get("deployed") }); },
    async deactivate() { await this.report("deactivate"); },
  },
  methods: {
    async report(hook) {
      await fetch(this.recorder + "/" + "${version}" + "/" + hook, { method: "POST" });
      if (hook === ${JSON.stringify(options.failOn ?? "")}) throw new Error("the " + hook + " hook broke on purpose");
    },
  },
  async run() { await this.report("run"); },
};`;
}

describe("hooks", () => {
  let server: TestServer;
  let recorder: Server;
  let recorderUrl: string;
  let calls: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    recorder = createServer((request, response) => {
      calls.push(request.url!.slice(1));
      response.end("ok");
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    recorderUrl = `http://127.0.0.1:${(recorder.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    recorder.close();
    await server.close();
  });
  beforeEach(() => {
    calls = [];
  });

  it("runs deploy then activate on deploy; deactivate, replace, activate on update; deactivate on delete", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: recordingComponent("1"), configured_props: { recorder: recorderUrl } });
    expect(calls).toEqual(["1/deploy", "1/activate"]);
    const events = await eventsOf(server, server.adminKey, source.id);
    expect(events.map((e) => e.event)).toEqual([{ hook: "activate", deployed: true }, { hook: "deploy" }]);

    calls = [];
    const updated = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { component_code: recordingComponent("2") } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.id).toBe(source.id);
    expect(calls).toEqual(["1/deactivate", "2/activate"]);

    calls = [];
    await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    expect(calls).toEqual(["2/run"]);

    calls = [];
    expect((await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey })).status).toBe(204);
    expect(calls).toEqual(["2/deactivate"]);
  });

  it("runs only deactivate when a source is turned off, and only activate when turned on", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: recordingComponent("1"), configured_props: { recorder: recorderUrl } });
    calls = [];
    const off = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { active: false } });
    expect(off.body.data.active).toBe(false);
    expect(calls).toEqual(["1/deactivate"]);
    calls = [];
    await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { active: true } });
    expect(calls).toEqual(["1/activate"]);
    calls = [];
    await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { active: false } });
    await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });
    expect(calls).toEqual(["1/deactivate"]);
  });

  it("fails a deploy whose hook throws, with its message, and creates nothing", async () => {
    const before = await call(server.url, "GET", "/v1/users/me/sources?limit=100", { key: server.adminKey });
    const response = await call(server.url, "POST", "/v1/sources", {
      key: server.adminKey,
      json: { component_code: recordingComponent("1", { failOn: "activate" }), name: "broken", configured_props: { recorder: recorderUrl } },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("HookFailed");
    expect(response.body.error.message).toContain("the activate hook broke on purpose");
    expect(response.body.error.details.error.stack).toContain("report");
    const after = await call(server.url, "GET", "/v1/users/me/sources?limit=100", { key: server.adminKey });
    expect(after.body.page_info.total_count).toBe(before.body.page_info.total_count);
  });

  it("keeps the previous code and props when the new activate hook throws", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: recordingComponent("1"), name: "stable", configured_props: { recorder: recorderUrl } });
    calls = [];
    const response = await call(server.url, "PUT", `/v1/sources/${source.id}`, {
      key: server.adminKey,
      json: { component_code: recordingComponent("2", { failOn: "activate" }), name: "changed" },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain("activate hook broke");
    expect(calls).toEqual(["1/deactivate", "2/activate", "1/activate"]);
    const after = await call(server.url, "GET", `/v1/sources/${source.id}`, { key: server.adminKey });
    expect(after.body.data).toMatchObject({ name: "stable", component_id: source.component_id, active: true });
  });

  it("fails a delete whose deactivate hook throws, and keeps the source", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: recordingComponent("1", { failOn: "deactivate" }), configured_props: { recorder: recorderUrl } });
    const response = await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain("deactivate hook broke");
    expect((await call(server.url, "GET", `/v1/sources/${source.id}`, { key: server.adminKey })).status).toBe(200);
  });
});
