import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNNEL_VERSION } from "../../src/version.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { fire, fireAll, keysOf, newerFirst, OK_STEP, runCount, throwingStep } from "./error-helpers.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

// A step time limit of 1 s makes a Timeout quick to produce; every other step here fails at once.
let server: TestServer;
let user: { id: string; key: string };
beforeAll(async () => {
  server = await startTestServer({ RUNNEL_HTTP_TIMEOUT_SECONDS: "1" });
  user = await createUser(server, "erin");
});
afterAll(() => server.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EVENT_ID = /^\d{13}-\d+$/;

/** Every field of one listed error, level by level, with no extra keys anywhere. */
function expectSeedShape(item: any, workflow: any) {
  expect(keysOf(item)).toEqual(["event", "id", "indexed_at_ms", "metadata"]);
  expect(item.id).toMatch(EVENT_ID);
  expect(Number.isInteger(item.indexed_at_ms)).toBe(true);
  expect(keysOf(item.event)).toEqual(["error", "original_context", "original_event"]);
  const context = item.event.original_context;
  expect(keysOf(context)).toEqual(["deployment_id", "id", "owner_id", "platform_version", "source_type", "ts", "verified", "workflow_id"]);
  expect(context.id).toEqual(expect.any(String));
  expect(context.ts).toMatch(ISO);
  expect(context.workflow_id).toBe(workflow.id);
  expect(context.deployment_id).toMatch(/^d_/);
  expect(context.deployment_id).toBe(workflow.deployment_id);
  expect(typeof context.verified).toBe("boolean");
  expect(context.owner_id).toBe(user.id);
  expect(context.platform_version).toBe(RUNNEL_VERSION);
  const error = item.event.error;
  expect(keysOf(error)).toEqual(["cellId", "code", "msg", "stack", "ts"]);
  expect(error.ts).toMatch(ISO);
  expect(typeof error.stack).toBe("string");
  expect(error.stack).toContain(error.msg);
  expect(keysOf(item.metadata)).toEqual(["emit_id", "emitter_id", "name"]);
  expect(item.metadata).toEqual({ emitter_id: workflow.id, emit_id: expect.any(String), name: "$errors" });
}

describe("the error event, field by field (seed: Error event summary)", () => {
  it("a thrown Error in an HTTP-triggered workflow", async () => {
    const workflow = await createWorkflow(server, user.key, {
      name: "Shape",
      trigger: { type: "http" },
      steps: [
        { name: "first", code: OK_STEP },
        { name: "boom", code: throwingStep("kaput") },
      ],
    });
    await fire(workflow.trigger.endpoint_url, { n: 7 }, "/sub/path?x=1&y=two");
    const listed = await waitFor(() => errorsOf(server, user.key, workflow.id), (body) => body.data.length === 1, "the error");

    expect(keysOf(listed)).toEqual(["data", "page_info"]);
    expect(keysOf(listed.page_info)).toEqual(["count", "end_cursor", "start_cursor", "total_count"]);
    const item = listed.data[0];
    expect(listed.page_info).toEqual({ total_count: 1, count: 1, start_cursor: item.id, end_cursor: item.id });

    expectSeedShape(item, workflow);
    const [run] = await runsOf(server, user.key, workflow.id);
    expect(run.status).toBe("error");
    expect(item.metadata.emit_id).toBe(run.id);
    expect(item.event.original_context.source_type).toBe("HTTP");
    expect(item.event.original_context.id).toBe(run.trigger.event_id);

    // The original event is the trigger event itself: the HTTP request as the steps saw it.
    const original = item.event.original_event;
    expect(original).toEqual(run.trigger.event);
    expect(keysOf(original)).toEqual(["body", "bodyRaw", "headers", "method", "path", "query"]);
    expect(original).toMatchObject({ method: "POST", path: "/sub/path", query: { x: "1", y: "two" }, bodyRaw: '{"n":7}', body: { n: 7 } });
    expect(original.headers["content-type"]).toBe("application/json");

    expect(item.event.error).toMatchObject({ code: "UserError", msg: "kaput 7", cellId: workflow.steps[1].id });
    expect(item.event.error.stack).toMatch(/^Error: kaput 7\n/);
    // The run says the same.
    expect(run.error).toMatchObject({ code: "UserError", msg: "kaput 7", cellId: workflow.steps[1].id });
    expect(run.steps.map((step: any) => step.status)).toEqual(["success", "error"]);
  });

  it("leaves `event` out without expand=event", async () => {
    const workflow = await createWorkflow(server, user.key, { name: "Short", trigger: { type: "http" }, steps: [{ name: "boom", code: throwingStep("short") }] });
    await fire(workflow.trigger.endpoint_url);
    await waitFor(() => errorsOf(server, user.key, workflow.id), (body) => body.data.length === 1, "the error");
    const listed = await call(server.url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries`, { key: user.key });
    expect(listed.status).toBe(200);
    const [item] = listed.body.data;
    expect(keysOf(item)).toEqual(["id", "indexed_at_ms", "metadata"]);
    expect(item.metadata).toEqual({ emitter_id: workflow.id, emit_id: expect.stringMatching(/^run_/), name: "$errors" });
    // By name slug too.
    const bySlug = await call(server.url, "GET", `/v1/workflows/${workflow.name_slug}/$errors/event_summaries`, { key: user.key });
    expect(bySlug.body.data.map((entry: any) => entry.id)).toEqual([item.id]);
  });

  it("a step past the time limit is a Timeout", async () => {
    const workflow = await createWorkflow(server, user.key, {
      name: "Slow",
      trigger: { type: "http" },
      steps: [{ name: "sleep", code: "export default defineComponent({ async run() { await new Promise((resolve) => setTimeout(resolve, 20000)); } })" }],
    });
    await fire(workflow.trigger.endpoint_url, { n: 1 });
    const listed = await waitFor(() => errorsOf(server, user.key, workflow.id), (body) => body.data.length === 1, "the timeout");
    const item = listed.data[0];
    expectSeedShape(item, workflow);
    expect(item.event.error).toMatchObject({ code: "Timeout", cellId: workflow.steps[0].id });
    expect(item.event.error.msg).toContain("1000 ms");
  });

  it("a timer-triggered workflow names TIMER and carries the tick as the original event", async () => {
    const workflow = await createWorkflow(server, user.key, { name: "Ticking", trigger: { type: "timer", intervalSeconds: 1 }, steps: [{ name: "boom", code: throwingStep("tock") }] });
    const listed = await waitFor(() => errorsOf(server, user.key, workflow.id), (body) => body.data.length >= 1, "a timer error");
    // Stop the ticks before looking closer.
    expect((await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key: user.key, json: { active: false } })).status).toBe(200);
    const item = listed.data[listed.data.length - 1];
    expectSeedShape(item, workflow);
    expect(item.event.original_context.source_type).toBe("TIMER");
    expect(item.event.error).toMatchObject({ code: "UserError", msg: "tock", cellId: workflow.steps[0].id });
    const runs = await runsOf(server, user.key, workflow.id);
    const run = runs.find((candidate) => candidate.id === item.metadata.emit_id);
    expect(item.event.original_event).toEqual(run.trigger.event);
    expect(item.event.original_event).not.toBeNull();
  });

  it("a prop expression that cannot be evaluated is a ConfigurationError", async () => {
    const workflow = await createWorkflow(server, user.key, {
      name: "Misconfigured",
      trigger: { type: "http" },
      steps: [{ name: "use", code: "export default defineComponent({ props: { v: { type: 'string' } }, async run() { return this.v; } })", props: { v: "fine" } }],
    });
    // A workflow stored with an expression the rules of today refuse (written by an older version, or
    // edited in the database): the run cannot evaluate it, so the step fails as misconfigured.
    const stored = (await server.server.store.findWorkflow(user.id, workflow.id))!;
    await server.server.store.updateWorkflow({ ...stored, steps: [{ ...stored.steps[0]!, props: { v: "{{ steps.trigger.event.body() }}" } }] });
    server.server.engine.worker.forget(workflow.id);
    await fire(workflow.trigger.endpoint_url, { n: 1 });
    const listed = await waitFor(() => errorsOf(server, user.key, workflow.id), (body) => body.data.length === 1, "the configuration error");
    const item = listed.data[0];
    expectSeedShape(item, workflow);
    expect(item.event.error.code).toBe("ConfigurationError");
    expect(item.event.error.cellId).toBe(workflow.steps[0].id);
    expect(item.event.error.msg).toContain("steps[0].props.v");
  });

  it("refuses a bad expression when the workflow is saved, naming the prop", async () => {
    for (const bad of ["{{ steps.trigger.event.body() }}", "{{\n steps.trigger.event.body() }}"]) {
      const refused = await call(server.url, "POST", "/v1/workflows", {
        key: user.key,
        json: { name: "Refused", trigger: { type: "http" }, steps: [{ name: "use", code: OK_STEP, props: { v: bad } }] },
      });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "ValidationError", details: { field: "steps[0].props.v" } });
    }
  });
});

describe("paging and retention", () => {
  it("keeps the 100 most recent of 105 errors and pages them newest first", async () => {
    const workflow = await createWorkflow(server, user.key, { name: "Many", trigger: { type: "http" }, steps: [{ name: "boom", code: throwingStep("many") }] });
    // The first five are surely the oldest: the other hundred are sent once they are listed.
    await fireAll(workflow.trigger.endpoint_url, [0, 1, 2, 3, 4].map((n) => ({ n })));
    await waitFor(() => errorsOf(server, user.key, workflow.id), (body) => body.page_info.total_count === 5, "the first five errors");
    await fireAll(workflow.trigger.endpoint_url, Array.from({ length: 100 }, (_, index) => ({ n: index + 5 })));
    await waitFor(() => runCount(server, user.key, workflow.id), (count) => count === 105, "105 runs", 60_000);

    const all = await errorsOf(server, user.key, workflow.id, "expand=event&limit=100");
    expect(all.page_info.total_count).toBe(100);
    expect(all.page_info.count).toBe(100);
    const ns = all.data.map((item: any) => item.event.original_event.body.n as number);
    expect([...ns].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, index) => index + 5));
    const ids: string[] = all.data.map((item: any) => item.id);
    expect([...ids].sort(newerFirst)).toEqual(ids);

    // limit + after: four pages, newest first, no overlap, nothing missing.
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = await errorsOf(server, user.key, workflow.id, `limit=30${after ? `&after=${after}` : ""}`);
      expect(page.page_info.total_count).toBe(100);
      if (page.data.length === 0) {
        expect(page.page_info).toEqual({ total_count: 100, count: 0, start_cursor: null, end_cursor: null });
        break;
      }
      const pageIds = page.data.map((item: any) => item.id);
      expect(page.page_info).toMatchObject({ count: pageIds.length, start_cursor: pageIds[0], end_cursor: pageIds[pageIds.length - 1] });
      for (const item of page.data) expect(item.event).toBeUndefined();
      pages.push(pageIds);
      after = page.page_info.end_cursor;
    }
    expect(pages.map((page) => page.length)).toEqual([30, 30, 30, 10]);
    expect(pages.flat()).toEqual(ids);

    // before: from the last page back to the one before it, in the same newest-first order.
    const previous = await errorsOf(server, user.key, workflow.id, `limit=30&before=${pages[3]![0]}`);
    expect(previous.data.map((item: any) => item.id)).toEqual(pages[2]);
    const newest = await errorsOf(server, user.key, workflow.id, `limit=30&before=${ids[0]}`);
    expect(newest.data).toEqual([]);
  });

  it("settings.error_retention = 3 keeps the 3 most recent", async () => {
    const workflow = await createWorkflow(server, user.key, {
      name: "Few",
      trigger: { type: "http" },
      settings: { error_retention: 3 },
      steps: [{ name: "boom", code: throwingStep("few") }],
    });
    expect(workflow.settings).toEqual({ error_notifications: true, error_retention: 3 });
    await fireAll(workflow.trigger.endpoint_url, [{ n: 0 }, { n: 1 }]);
    await waitFor(() => errorsOf(server, user.key, workflow.id), (body) => body.page_info.total_count === 2, "the first two errors");
    await fireAll(workflow.trigger.endpoint_url, [{ n: 2 }, { n: 3 }, { n: 4 }]);
    await waitFor(() => runCount(server, user.key, workflow.id), (count) => count === 5, "five runs");
    const listed = await errorsOf(server, user.key, workflow.id);
    expect(listed.page_info.total_count).toBe(3);
    expect(listed.data.map((item: any) => item.event.original_event.body.n).sort()).toEqual([2, 3, 4]);
  });

  it("refuses bad paging parameters, naming the field", async () => {
    const workflow = await createWorkflow(server, user.key, { name: "Paging", trigger: { type: "http" }, steps: [{ name: "ok", code: OK_STEP }] });
    const base = `/v1/workflows/${workflow.id}/$errors/event_summaries`;
    for (const [query, field] of [
      ["after=nope", "after"],
      ["before=12-x", "before"],
      ["after=01-0", "after"],
      ["limit=0", "limit"],
      ["limit=ten", "limit"],
    ] as const) {
      const refused = await call(server.url, "GET", `${base}?${query}`, { key: user.key });
      expect(refused.status, query).toBe(400);
      expect(refused.body.error, query).toMatchObject({ code: "ValidationError", message: expect.stringContaining(field), details: { field } });
    }
    // The largest and smallest limits are fine, and more than the largest is taken as it.
    expect((await call(server.url, "GET", `${base}?limit=100`, { key: user.key })).status).toBe(200);
    expect((await call(server.url, "GET", `${base}?limit=1000`, { key: user.key })).status).toBe(200);
    expect((await call(server.url, "GET", `${base}?limit=1`, { key: user.key })).body).toEqual({ page_info: { total_count: 0, count: 0, start_cursor: null, end_cursor: null }, data: [] });
  });
});
