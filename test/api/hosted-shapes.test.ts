import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventually } from "../helpers/sources.js";
import { openStream } from "../helpers/sse.js";

/**
 * The hosted API's shapes that issue 15 adds: workspace aliases of the own
 * lists, a workflow's documented triggers and steps, its emits' raw_event,
 * the documented create/update body, and the documented stream addresses.
 */
const EMITTER = `module.exports = {
  name: "Emitter", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) {
    console.log("got " + event.path);
    if (event.body && event.body.id) this.$emit(event.body, { id: event.body.id });
    else this.$emit(event.body);
  },
};`;

const emitStep = (name: string) => ({
  name,
  code: `export default defineComponent({ async run({ steps, $ }) {
    $.send.emit({ raw_event: { name: "Luke", n: steps.trigger.event.body.n } });
    $.send.emit({ raw_event: { name: "Leia", n: steps.trigger.event.body.n } });
  } })`,
});

let server: TestServer;
let alice: { id: string; key: string };
let bob: { id: string; key: string };
let aliceWorkspace: string;
let bobWorkspace: string;
let source: { id: string; endpoint_url: string; name_slug: string };

const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const workspaceOf = async (key: string) => (await call(server.url, "GET", "/v1/users/me/workspaces", { key })).body.data[0].id as string;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  aliceWorkspace = await workspaceOf(alice.key);
  bobWorkspace = await workspaceOf(bob.key);
  source = await deploySource(server, alice.key, { component_code: EMITTER, name: "emitter" });
  await deploySource(server, alice.key, { component_code: EMITTER, name: "second" });
  await deploySource(server, bob.key, { component_code: EMITTER, name: "bobs" });
});
afterAll(() => server.close());

describe("workspace aliases of the own lists", () => {
  it("GET /v1/orgs/<id>/sources is /v1/users/me/sources, paging included", async () => {
    const own = await call(server.url, "GET", "/v1/users/me/sources?limit=1", { key: alice.key });
    const aliased = await call(server.url, "GET", `/v1/orgs/${aliceWorkspace}/sources?limit=1`, { key: alice.key });
    expect(aliased.status).toBe(200);
    expect(aliased.body).toEqual(own.body);
    expect(aliased.body.page_info).toMatchObject({ total_count: 2, count: 1 });
    const next = await call(server.url, "GET", `/v1/orgs/${aliceWorkspace}/sources?limit=1&after=${aliased.body.page_info.end_cursor}`, { key: alice.key });
    expect(next.body.data.map((item: any) => item.name)).toEqual((await call(server.url, "GET", `/v1/users/me/sources?limit=1&after=${own.body.page_info.end_cursor}`, { key: alice.key })).body.data.map((item: any) => item.name));
    expect(next.body.data[0].id).not.toBe(aliased.body.data[0].id);
  });

  it("GET /v1/workspaces/<id>/subscriptions is /v1/users/me/subscriptions", async () => {
    const workflow = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json: { name: "listener", steps: [] } });
    expect(workflow.status).toBe(200);
    expect((await call(server.url, "POST", `/v1/subscriptions?emitter_id=${source.id}&listener_id=${workflow.body.data.id}`, { key: alice.key })).status).toBe(200);
    const own = await call(server.url, "GET", "/v1/users/me/subscriptions", { key: alice.key });
    const aliased = await call(server.url, "GET", `/v1/workspaces/${aliceWorkspace}/subscriptions`, { key: alice.key });
    expect(aliased.status).toBe(200);
    expect(aliased.body).toEqual(own.body);
    expect(aliased.body.data).toContainEqual(expect.objectContaining({ emitter_id: source.id, listener_id: workflow.body.data.id }));
  });

  it("answer another user's workspace, or an unknown one, with the same 404 that says where yours is", async () => {
    for (const path of [`/v1/orgs/${bobWorkspace}/sources`, `/v1/workspaces/${bobWorkspace}/subscriptions`]) {
      const other = await call(server.url, "GET", path, { key: alice.key });
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe("NotFound");
      expect(other.body.error.message).toContain("/v1/users/me/workspaces");
      const unknown = await call(server.url, "GET", path.replace(bobWorkspace, "o_nosuchworkspace"), { key: alice.key });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message.replace("o_nosuchworkspace", "X")).toBe(other.body.error.message.replace(bobWorkspace, "X"));
    }
    // Bob's own alias lists only his.
    const bobs = await call(server.url, "GET", `/v1/orgs/${bobWorkspace}/sources`, { key: bob.key });
    expect(bobs.body.data.map((item: any) => item.name)).toEqual(["bobs"]);
  });
});

describe("the hosted API's workflow body", () => {
  it("creates from org_id, settings.name, triggers and steps[].namespace, naming the ignored project_id and template_id", async () => {
    const created = await call(server.url, "POST", "/v1/workflows", {
      key: alice.key,
      json: {
        org_id: aliceWorkspace,
        project_id: "proj_abc123",
        template_id: "tch_abc123",
        settings: { name: "Documented flow", auto_deploy: true },
        triggers: [{ type: "http" }],
        steps: [emitStep("say")].map(({ name, ...step }) => ({ namespace: name, ...step })),
      },
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ name: "Documented flow", active: true, trigger: { type: "http" }, steps: [{ name: "say", namespace: "say" }] });
    expect(created.body.warnings.map((warning: any) => warning.field)).toEqual(["project_id", "template_id", "settings.auto_deploy"]);
    expect(created.body.warnings[0].message).toMatch(/ignored/);
  });

  it("takes a trigger's props as its configured_props, and Runnel's own body still answers without warnings", async () => {
    const created = await call(server.url, "POST", "/v1/workflows", {
      key: alice.key,
      json: { name: "From a component", triggers: [{ component_code: EMITTER, props: {} }], steps: [{ namespace: "noop", code: "export default defineComponent({ async run() {} })" }] },
    });
    expect(created.status).toBe(200);
    expect(created.body.data.trigger.type).toBe("component");
    expect(created.body).not.toHaveProperty("warnings");
  });

  it("updates from the documented { active, org_id } and settings.name", async () => {
    const created = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json: { name: "To pause", trigger: { type: "http" }, steps: [] } });
    const id = created.body.data.id;
    const paused = await call(server.url, "PUT", `/v1/workflows/${id}`, { key: alice.key, json: { active: false, org_id: aliceWorkspace } });
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ id, active: false, name: "To pause" });
    expect(paused.body).not.toHaveProperty("warnings");
    const renamed = await call(server.url, "PUT", `/v1/workflows/${id}`, { key: alice.key, json: { settings: { name: "Paused flow" }, project_id: "proj_1" } });
    expect(renamed.body.data).toMatchObject({ name: "Paused flow", active: false });
    expect(renamed.body.warnings).toEqual([{ field: "project_id", message: expect.stringContaining("project_id is ignored") }]);
  });

  it("refuses what it cannot honour, naming the field", async () => {
    // [body, status, the field named in details.field, whether the message says it too (a bad step name is quoted instead)]
    const refusals: Array<[Record<string, unknown>, number, string | null, boolean?]> = [
      [{ name: "x", colour: "blue" }, 400, "colour"],
      [{ name: "x", steps: [{ namespace: "a", code: "x", lang: "python" }] }, 400, "steps.0.lang"],
      [{ name: "x", triggers: [{ type: "http" }, { type: "http" }] }, 400, "triggers"],
      [{ name: "x", trigger: { type: "http" }, triggers: [{ type: "http" }] }, 400, "triggers"],
      [{ name: "x", settings: { name: "y" } }, 400, "settings.name"],
      [{ name: "x", steps: [{ name: "a", namespace: "b", code: "x" }] }, 400, "steps[0].namespace"],
      [{ name: "x", steps: [{ code: "x" }] }, 400, "steps[0].name"],
      [{ name: "x", org_id: bobWorkspace }, 404, null],
      // The rules' own refusals name the field as it was sent.
      [{ name: "x", triggers: [{ type: "timer", intervalSeconds: 0 }], steps: [] }, 400, "triggers[0].intervalSeconds"],
      [{ name: "x", steps: [{ namespace: "1bad", code: "x" }] }, 400, "steps[0].namespace", false],
      [{ settings: { name: "" }, steps: [] }, 400, "settings.name"],
    ];
    for (const [json, status, field, inMessage = true] of refusals) {
      const refused = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json });
      expect({ json, status: refused.status }).toEqual({ json, status });
      if (field) expect({ json, field: refused.body.error.details?.field, named: refused.body.error.message.includes(field) }).toEqual({ json, field, named: inMessage });
    }
  });
});

describe("GET /v1/workflows/<id>", () => {
  it("answers the documented top-level triggers and steps beside Runnel's data", async () => {
    const created = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json: { name: "Shown", trigger: { type: "http" }, respond: "workflow", steps: [{ name: "only", code: "export default defineComponent({ async run({ $ }) { $.respond({ status: 200 }); } })" }] } });
    const got = await call(server.url, "GET", `/v1/workflows/${created.body.data.id}`, { key: alice.key });
    expect(got.status).toBe(200);
    const { data, triggers, steps } = got.body;
    expect(triggers).toEqual([{ id: data.trigger.source_id, type: "http", endpoint_url: data.trigger.endpoint_url, custom_response: true }]);
    expect(triggers[0].id).toMatch(/^dc_/);
    expect(steps).toEqual([{ id: data.steps[0].id, namespace: "only", disabled: false, component: true, savedComponent: { id: data.steps[0].component_id }, key: null, props: {} }]);
    expect(steps[0].id).toMatch(/^c_/);
    // Runnel's own fields, which its CLI reads, stay.
    expect(data).toMatchObject({ name: "Shown", trigger: { type: "http" }, steps: [{ name: "only" }], triggers });
    const bySlug = await call(server.url, "GET", `/v1/workflows/${data.name_slug}`, { key: alice.key });
    expect(bySlug.body.triggers).toEqual(triggers);
  });

  it("shows a timer trigger's schedule as a configured timer echoes it: interval_seconds or cron, the other null", async () => {
    const POLLER = `export default { name: "Poller", version: "0.1.0", props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 900 } } }, async run() { this.$emit({ polled: true }); } };`;
    const cases = [
      { name: "Every hour", trigger: { type: "timer", intervalSeconds: 3600 }, type: "timer", schedule: { interval_seconds: 3600, cron: null } },
      { name: "Each morning", trigger: { type: "timer", cron: "0 7 * * *" }, type: "timer", schedule: { interval_seconds: null, cron: "0 7 * * *" } },
      { name: "Polling source", trigger: { component_code: POLLER, configured_props: {} }, type: "component", schedule: { interval_seconds: 900, cron: null } },
    ];
    for (const { name, trigger, type, schedule } of cases) {
      const created = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json: { name, trigger, steps: [] } });
      expect({ name, status: created.status }).toEqual({ name, status: 200 });
      const got = await call(server.url, "GET", `/v1/workflows/${created.body.data.id}`, { key: alice.key });
      expect({ name, triggers: got.body.triggers }).toEqual({ name, triggers: [{ id: created.body.data.trigger.source_id, type, ...schedule }] });
      expect(got.body.data.triggers).toEqual(got.body.triggers);
    }
    // The hosted body's form of a timer trigger answers the same.
    const hosted = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json: { settings: { name: "Hosted timer" }, triggers: [{ type: "timer", intervalSeconds: 600 }], steps: [] } });
    expect(hosted.body.data.triggers).toEqual([{ id: hosted.body.data.trigger.source_id, type: "timer", interval_seconds: 600, cron: null }]);
  });

  it("lists no trigger for a workflow run only by subscriptions", async () => {
    const created = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json: { name: "Untriggered", steps: [] } });
    const got = await call(server.url, "GET", `/v1/workflows/${created.body.data.id}`, { key: alice.key });
    expect(got.body.triggers).toEqual([]);
    expect(got.body.steps).toEqual([]);
  });
});

describe("emitted events", () => {
  it("of a workflow carry event.raw_event and a non-null, distinct emit_id", async () => {
    const created = await call(server.url, "POST", "/v1/workflows", { key: alice.key, json: { name: "Emits", trigger: { type: "http" }, steps: [emitStep("emit")] } });
    expect(created.status).toBe(200);
    expect((await post(created.body.data.trigger.endpoint_url, { n: 7 })).status).toBe(200);
    const listed = await eventually(async () => {
      const page = await call(server.url, "GET", `/v1/workflows/${created.body.data.id}/event_summaries?expand=event&limit=10`, { key: alice.key });
      return page.body.data.length === 2 ? page.body : undefined;
    }, 20_000, "the workflow's two emits");
    expect(listed.data.map((item: any) => item.event)).toEqual([{ raw_event: { name: "Leia", n: 7 } }, { raw_event: { name: "Luke", n: 7 } }]);
    for (const item of listed.data) expect(item.metadata).toEqual({ emit_id: expect.any(String), name: "", emitter_id: created.body.data.id });
    expect(new Set(listed.data.map((item: any) => item.metadata.emit_id)).size).toBe(2);
  });

  it("of a source carry metadata.id (the $emit id, null without one) and a non-null emit_id", async () => {
    expect((await post(source.endpoint_url, { id: "order-1", total: 3 })).status).toBe(200);
    expect((await post(source.endpoint_url, { total: 4 })).status).toBe(200);
    const page = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?limit=2`, { key: alice.key });
    const [withoutId, withId] = page.body.data;
    expect(withId.metadata).toEqual({ id: "order-1", emit_id: "order-1", name: "", emitter_id: source.id });
    expect(withoutId.metadata).toEqual({ id: null, emit_id: withoutId.id, name: "", emitter_id: source.id });
  });
});

describe("the documented stream addresses", () => {
  it("/sse/<id>/emits streams a source's events and /sse/<id>/observations its logs, with the API key", async () => {
    const emits = await openStream(`${server.url}/sse/${source.id}/emits`, alice.key);
    const observations = await openStream(`${server.url}/sse/${source.id}/observations`, alice.key);
    const byKind = await openStream(`${server.url}/sse/dc/${source.name_slug}/emits`, alice.key);
    try {
      for (const stream of [emits, observations, byKind]) {
        expect(stream.status).toBe(200);
        expect(stream.contentType).toContain("text/event-stream");
      }
      expect((await fetch(`${source.endpoint_url}/streamed`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"live":true}' })).status).toBe(200);
      const emitted = await emits.next((message) => message.data.includes('"live":true'));
      expect(JSON.parse(emitted.data)).toMatchObject({ event: { live: true }, metadata: { emitter_id: source.id, name: "" } });
      await byKind.next((message) => message.data.includes('"live":true'));
      const logged = await observations.next((message) => message.event === "log" && message.data.includes("got /streamed"));
      expect(JSON.parse(logged.data)).toMatchObject({ stream: "stdout", text: expect.stringContaining("got /streamed") });
    } finally {
      await Promise.all([emits.close(), observations.close(), byKind.close()]);
    }
  });

  it("need the key, and never stream another user's source", async () => {
    const anonymous = await call(server.url, "GET", `/sse/${source.id}/emits`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("Unauthorized");
    const other = await call(server.url, "GET", `/sse/${source.id}/observations`, { key: bob.key });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("NotFound");
  });
});
