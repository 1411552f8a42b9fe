import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf } from "../helpers/sources.js";
import { errorWorkflowOf, fire, OK_STEP, throwingStep } from "../workflows/error-helpers.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/** What the console's lists and home page read: counts of events and runs, on both stores. */
const EMITTER = `module.exports = { name: "Counted", version: "1", props: { http: "$.interface.http" }, async run(e) { this.$emit(e.body, { name: e.body.channel ?? "" }); this.http.respond({ status: 200 }); } };`;

const backends: Array<[string, () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>]> = [
  ["SQLite", async () => ({ env: {}, drop: async () => undefined })],
  [
    "PostgreSQL",
    async () => {
      const schema = await createTestSchema("runnel_console");
      return { env: { DATABASE_URL: schema.databaseUrl }, drop: () => schema.drop() };
    },
  ],
];

describe.each(backends)("console lists on %s", (_name, backend) => {
  let server: TestServer;
  let dropBackend: () => Promise<void>;
  beforeAll(async () => {
    const opened = await backend();
    dropBackend = opened.drop;
    server = await startTestServer(opened.env);
  });
  afterAll(async () => {
    await server?.close();
    await dropBackend?.();
  });

  it("lists the server's users to an admin, newest first and paged, and to nobody else", async () => {
    const ulla = await createUser(server, "ulla");
    const vic = await createUser(server, "vic");
    const first = await call(server.url, "GET", "/v1/users?limit=1", { key: server.adminKey });
    expect(first.status).toBe(200);
    expect(first.body.data.map((user: { username: string }) => user.username)).toEqual(["vic"]);
    expect(first.body.page_info.total_count).toBeGreaterThanOrEqual(3);
    const next = await call(server.url, "GET", `/v1/users?limit=1&after=${encodeURIComponent(first.body.page_info.end_cursor)}`, { key: server.adminKey });
    expect(next.body.data.map((user: { username: string }) => user.username)).toEqual(["ulla"]);
    expect(JSON.stringify(first.body)).not.toContain("api_key");
    const refused = await call(server.url, "GET", "/v1/users", { key: ulla.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("Only an admin");
    expect(vic.id).toMatch(/^u_/);
  });

  it("lists each source with the events it keeps and when the newest came, only the caller's", async () => {
    const ana = await createUser(server, "ana");
    const ben = await createUser(server, "ben");
    const busy = await deploySource(server, ana.key, { component_code: EMITTER, name: "busy" });
    const quiet = await deploySource(server, ana.key, { component_code: EMITTER, name: "quiet" });
    const bens = await deploySource(server, ben.key, { component_code: EMITTER, name: "bens" });
    expect(busy).toMatchObject({ event_count: 0, last_event_at: null });

    const before = Date.now();
    for (const body of [{ n: 1 }, { n: 2 }, { n: 3, channel: "other" }]) await fire(busy.endpoint_url, body);
    await fire(bens.endpoint_url, { n: 9 });
    await waitFor(() => eventsOf(server, ana.key, busy.id), (events) => events.length === 3, "three events");
    await waitFor(() => eventsOf(server, ben.key, bens.id), (events) => events.length === 1, "Ben's event");

    const listed = await call(server.url, "GET", "/v1/users/me/sources?limit=100", { key: ana.key });
    expect(listed.status).toBe(200);
    const byId = new Map<string, any>(listed.body.data.map((source: any) => [source.id, source]));
    expect([...byId.keys()].sort()).toEqual([busy.id, quiet.id].sort());
    expect(byId.get(busy.id).event_count).toBe(3);
    const last = Date.parse(byId.get(busy.id).last_event_at);
    expect(last).toBeGreaterThanOrEqual(before - 1_000);
    expect(last).toBeLessThanOrEqual(Date.now());
    expect(byId.get(quiet.id)).toMatchObject({ event_count: 0, last_event_at: null });

    // One source read alone carries the same.
    const single = await call(server.url, "GET", `/v1/sources/${busy.id}`, { key: ana.key });
    expect(single.body.data).toMatchObject({ event_count: 3, last_event_at: byId.get(busy.id).last_event_at });

    // Deleting events shows at once.
    await call(server.url, "DELETE", `/v1/sources/${busy.id}/events?event_name=other`, { key: ana.key });
    const after = await call(server.url, "GET", `/v1/sources/${busy.id}`, { key: ana.key });
    expect(after.body.data.event_count).toBe(2);
  });

  it("lists each workflow with its last run and its runs and errors of the last 24 hours", async () => {
    const { key } = await createUser(server, "cleo");
    const good = await createWorkflow(server, key, { name: "Good", trigger: { type: "http" }, steps: [{ name: "ok", code: OK_STEP }] });
    const bad = await createWorkflow(server, key, { name: "Bad", trigger: { type: "http" }, steps: [{ name: "boom", code: throwingStep("broken") }] });
    const idle = await createWorkflow(server, key, { name: "Idle", trigger: { type: "http" }, steps: [{ name: "ok", code: OK_STEP }] });
    expect(good).toMatchObject({ last_run_at: null, runs_24h: 0, errors_24h: 0 });

    for (const n of [1, 2]) await fire(good.trigger.endpoint_url, { n });
    for (const n of [1, 2, 3]) await fire(bad.trigger.endpoint_url, { n });
    await waitFor(() => runsOf(server, key, good.id), (runs) => runs.length === 2, "two good runs");
    const badRuns = await waitFor(() => runsOf(server, key, bad.id), (runs) => runs.length === 3, "three failed runs");

    const listed = await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key });
    expect(listed.status).toBe(200);
    const byId = new Map<string, any>(listed.body.data.map((workflow: any) => [workflow.id, workflow]));
    expect(byId.get(good.id)).toMatchObject({ runs_24h: 2, errors_24h: 0 });
    expect(byId.get(bad.id)).toMatchObject({ runs_24h: 3, errors_24h: 3 });
    expect(byId.get(idle.id)).toMatchObject({ last_run_at: null, runs_24h: 0, errors_24h: 0 });
    const newestStart = Math.max(...badRuns.map((run: any) => run.started_at_ms));
    expect(Date.parse(byId.get(bad.id).last_run_at)).toBe(newestStart);

    const single = await call(server.url, "GET", `/v1/workflows/${bad.id}`, { key });
    expect(single.body.data).toMatchObject({ runs_24h: 3, errors_24h: 3, last_run_at: byId.get(bad.id).last_run_at });
  });

  it("answers the activity of the last minutes: a bucket per minute, failing workflows first, only the caller's", async () => {
    const { key } = await createUser(server, "dora");
    const other = await createUser(server, "eli");
    const source = await deploySource(server, key, { component_code: EMITTER, name: "feed" });
    const good = await createWorkflow(server, key, { name: "Fine", trigger: { type: "http" }, steps: [{ name: "ok", code: OK_STEP }] });
    const once = await createWorkflow(server, key, { name: "Fails once", trigger: { type: "http" }, steps: [{ name: "boom", code: throwingStep("x") }] });
    const twice = await createWorkflow(server, key, { name: "Fails twice", trigger: { type: "http" }, steps: [{ name: "boom", code: throwingStep("y") }] });
    const others = await createWorkflow(server, other.key, { name: "Not yours", trigger: { type: "http" }, steps: [{ name: "boom", code: throwingStep("z") }] });

    for (const n of [1, 2, 3, 4]) await fire(source.endpoint_url, { n });
    await fire(good.trigger.endpoint_url, {});
    await fire(once.trigger.endpoint_url, {});
    for (const n of [1, 2]) await fire(twice.trigger.endpoint_url, { n });
    await fire(others.trigger.endpoint_url, {});
    await waitFor(() => eventsOf(server, key, source.id), (events) => events.length === 4, "four events");
    for (const [workflow, count] of [[good, 1], [once, 1], [twice, 2]] as const) await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === count, "runs");
    await waitFor(() => runsOf(server, other.key, others.id), (runs) => runs.length === 1, "Eli's run");
    // Each failure also runs the global error workflow once: runs too.
    const errorWorkflow = await waitFor(() => errorWorkflowOf(server, key), (found) => found !== undefined, "the error workflow");
    await waitFor(() => runsOf(server, key, errorWorkflow.id), (runs) => runs.length === 3, "the error workflow's runs");

    const answer = await call(server.url, "GET", "/v1/users/me/activity?minutes=5", { key });
    expect(answer.status).toBe(200);
    const { buckets, failing_workflows } = answer.body.data;
    expect(buckets).toHaveLength(5);
    const starts = buckets.map((bucket: any) => Date.parse(bucket.minute));
    starts.forEach((start: number, index: number) => {
      expect(start % 60_000).toBe(0);
      if (index > 0) expect(start - starts[index - 1]).toBe(60_000);
    });
    expect(starts[4]).toBeLessThanOrEqual(Date.now());
    const sum = (field: string) => buckets.reduce((total: number, bucket: any) => total + bucket[field], 0);
    expect(sum("runs")).toBe(4 + 3);
    expect(sum("errors")).toBe(3);
    // The feed's four, and the four requests to the workflows' HTTP triggers (sources too).
    expect(sum("events")).toBe(4 + 4);
    expect(failing_workflows.map((workflow: any) => [workflow.id, workflow.name, workflow.errors])).toEqual([
      [twice.id, "Fails twice", 2],
      [once.id, "Fails once", 1],
    ]);
    expect(Date.parse(failing_workflows[0].last_error_at)).toBeLessThanOrEqual(Date.now());

    const defaulted = await call(server.url, "GET", "/v1/users/me/activity", { key });
    expect(defaulted.body.data.buckets).toHaveLength(60);
  });

  it("runs a workflow by hand on a sample event and answers the finished run", async () => {
    const { key } = await createUser(server, "gus");
    const workflow = await createWorkflow(server, key, { name: "By hand", trigger: { type: "manual" }, steps: [{ name: "ok", code: OK_STEP }] });
    const answer = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs?wait=true`, { key, json: { event: { body: { n: 7 } } } });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ status: "success", trigger: { event: { body: { n: 7 } } }, steps: [{ $return_value: { ok: true, n: 7 } }] });
    const listed = await call(server.url, "GET", "/v1/users/me/workflows", { key });
    expect(listed.body.data.find((item: any) => item.id === workflow.id)).toMatchObject({ runs_24h: 1, errors_24h: 0, last_run_at: new Date(answer.body.data.started_at_ms).toISOString() });
  });

  it("answers each of many manual runs queued at once with its own run: the id each caller was given is the run of its event", async () => {
    const { key } = await createUser(server, "hal");
    const workflow = await createWorkflow(server, key, { name: "Many by hand", trigger: { type: "manual" }, steps: [{ name: "ok", code: OK_STEP }] });
    const sent = Array.from({ length: 16 }, (_, n) => n);
    const answers = await Promise.all(sent.map((n) => call(server.url, "POST", `/v1/workflows/${workflow.id}/runs?wait=true`, { key, json: { event: { body: { n } } } })));
    // Runs of one batch are ordered by id; a caller's run keeps the id it was given whatever its place in the batch.
    expect(answers.map((answer) => answer.body.data.trigger.event.body.n)).toEqual(sent);
    for (const [n, answer] of answers.entries()) {
      const again = await call(server.url, "GET", `/v1/runs/${answer.body.data.id}`, { key });
      expect(again.body.data.trigger.event.body.n).toBe(n);
    }
  });

  it("refuses a window out of range, naming the parameter", async () => {
    const { key } = await createUser(server, "fay");
    for (const minutes of ["0", "1441", "soon"]) {
      const answer = await call(server.url, "GET", `/v1/users/me/activity?minutes=${minutes}`, { key });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "ValidationError", details: { field: "minutes" } });
      expect(answer.body.error.message).toContain("minutes");
    }
    expect((await call(server.url, "GET", "/v1/users/me/activity")).status).toBe(401);
  });
});
