import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePrometheusText, sampleValue, type Family } from "../helpers/prometheus-text.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/** GET /metrics on real servers: off by default, behind the admin key or open, and counting what really ran. */

const scrape = async (server: TestServer, key?: string): Promise<Map<string, Family>> => {
  const answer = await call(server.url, "GET", "/metrics", key ? { key } : {});
  expect(answer.status, String(answer.body)).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(answer.body as string);
};

describe("RUNNEL_METRICS unset", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("has no /metrics: 404 even with the admin's key", async () => {
    expect((await call(server.url, "GET", "/metrics")).status).toBe(404);
    const withKey = await call(server.url, "GET", "/metrics", { key: server.adminKey });
    expect(withKey.status).toBe(404);
    expect(withKey.body.error.code).toBe("NotFound");
  });
});

describe("RUNNEL_METRICS=public", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_METRICS: "public" });
  });
  afterAll(() => server.close());

  it("answers without a key, with the process's default metrics", async () => {
    const families = await scrape(server);
    expect(families.get("process_cpu_user_seconds_total")?.type).toBe("counter");
    expect(families.get("nodejs_eventloop_lag_seconds")?.type).toBe("gauge");
    expect(sampleValue(families, "runnel_process_info", { role: "all", instance_id: server.server.instanceId })).toBe(1);
  });
});

describe("RUNNEL_METRICS=admin", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_METRICS: "admin" });
  });
  afterAll(() => server.close());

  it("is described in the OpenAPI document as text behind the Bearer key, and the document stays valid", async () => {
    const { body } = await call(server.url, "GET", "/v1/openapi.json");
    const result = await new Validator().validate(body);
    expect(result.errors ?? []).toEqual([]);
    expect(body.paths["/metrics"].get.security).toEqual([{ bearerAuth: [] }]);
  });

  it("needs an admin's key: none is 401, a user's is 403", async () => {
    const none = await call(server.url, "GET", "/metrics");
    expect(none.status).toBe(401);
    expect(none.body.error.message).toMatch(/Authorization: Bearer/);
    const { key } = await createUser(server, "notadmin");
    const user = await call(server.url, "GET", "/metrics", { key });
    expect(user.status).toBe(403);
    expect(user.body.error.message).toMatch(/admin/);
  });

  it("counts sources' calls, workflows' runs, their errors and events, and times them per trigger kind", async () => {
    const { key } = await createUser(server, "measured");
    const before = await scrape(server, server.adminKey);
    const count = (families: Map<string, Family>, name: string, labels: Record<string, string>) => sampleValue(families, name, labels) ?? 0;
    expect(families(before)).toEqual(expect.arrayContaining(["runnel_runs_total", "runnel_run_duration_seconds", "runnel_delivery_queue_waiting", "runnel_runners", "runnel_runner_cold_starts_total"]));

    // A source whose HTTP calls emit two events each; its own heap size is no spare's, so its first call starts a runner.
    const source = await deploySource(server, key, {
      name: "twice",
      memory_mb: 128,
      component_code: 'export default { name: "twice", version: "0.1.0", props: { http: "$.interface.http" }, async run(e) { this.$emit({ a: 1 }); this.$emit({ b: 2 }); } }',
    });
    expect((await fetch(source.endpoint_url, { method: "POST", body: "{}" })).status).toBe(200);
    await eventually(async () => ((await eventsOf(server, key, source.id)).length === 2 ? true : undefined), 15_000, "the source's two events");

    // A workflow on HTTP: one run succeeds, one throws; then one run by hand.
    const workflow = await createWorkflow(server, key, {
      name: "Measured",
      trigger: { type: "http" },
      steps: [{ name: "maybe_fail", code: "export default defineComponent({ async run({ steps }) { if (steps.trigger.event.body.fail) throw new Error('asked to'); return 1; } })" }],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ fail: false }) });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ fail: true }) });
    expect((await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs?wait=true`, { key, json: { event: { body: { fail: false } } } })).status).toBe(200);
    await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 3, "three runs");

    const after = await scrape(server, server.adminKey);
    const moved = (name: string, labels: Record<string, string>) => count(after, name, labels) - count(before, name, labels);
    // The source's call (and the workflow's trigger source's two calls) ran on HTTP.
    expect(moved("runnel_runs_total", { kind: "source", trigger: "http", outcome: "success" })).toBe(3);
    expect(moved("runnel_events_emitted_total", { kind: "source" })).toBe(4);
    expect(moved("runnel_runs_total", { kind: "workflow", trigger: "http", outcome: "success" })).toBe(1);
    expect(moved("runnel_runs_total", { kind: "workflow", trigger: "http", outcome: "error" })).toBe(1);
    expect(moved("runnel_runs_total", { kind: "workflow", trigger: "manual", outcome: "success" })).toBe(1);
    expect(moved("runnel_run_errors_total", { kind: "workflow", code: "UserError" })).toBe(1);
    // The failed run's `$errors` event is an event its workflow emitted.
    expect(moved("runnel_events_emitted_total", { kind: "workflow" })).toBe(1);
    // Latency: each run a sample of its trigger kind's histogram, inside the +Inf bucket.
    expect(moved("runnel_run_duration_seconds_count", { kind: "workflow", trigger: "http" })).toBe(2);
    expect(moved("runnel_run_duration_seconds_count", { kind: "workflow", trigger: "manual" })).toBe(1);
    expect(count(after, "runnel_run_duration_seconds_sum", { kind: "workflow", trigger: "http" })).toBeGreaterThan(0);
    expect(count(after, "runnel_run_duration_seconds_bucket", { kind: "workflow", trigger: "http", le: "+Inf" })).toBe(count(after, "runnel_run_duration_seconds_count", { kind: "workflow", trigger: "http" }));
    // The pool ran them: the source's call waited for a runner to start, and none is busy now; nothing waits in the queue.
    expect(moved("runnel_runner_cold_starts_total", {})).toBeGreaterThanOrEqual(1);
    expect(count(after, "runnel_runners", { state: "busy" })).toBe(0);
    expect(count(after, "runnel_runners", { state: "idle" })).toBeGreaterThanOrEqual(1);
    expect(count(after, "runnel_runners_max", {})).toBeGreaterThan(0);
    expect(sampleValue(after, "runnel_delivery_queue_waiting")).toBe(0);
    expect(sampleValue(after, "runnel_delivery_queue_oldest_wait_seconds")).toBe(0);
  });
});

function families(map: Map<string, Family>): string[] {
  return [...map.keys()];
}
