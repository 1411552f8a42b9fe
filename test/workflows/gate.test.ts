import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareEventIds } from "../../src/domain/event-ids.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, waitFor } from "./helpers.js";
import { Redis } from "ioredis";
import { modes, REDIS_URL } from "./modes.js";

/**
 * The gate of a workflow's runs (settings.concurrency, concurrency_key,
 * rate_limit), end to end through a real server: events sent at once wait
 * their turn, in arrival order, and none is dropped. The same cases on each
 * mode: SQLite and PostgreSQL with the local queue, and PostgreSQL with
 * BullMQ on Redis (one process; test/scale/gate.suite.ts runs workers apart).
 */

const MODES = modes("runnel_gate");

/**
 * Appends its event's `n` to a list in a data store by read-modify-write:
 * two runs at once would lose one of the two writes, so the list is whole
 * and in order only when the runs ran one after the other, in that order.
 */
const APPEND_TO_LIST = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps }) {
    const key = "seen-" + (steps.trigger.event.body.customer ?? "all");
    const seen = (await this.store.get(key)) ?? [];
    seen.push(steps.trigger.event.body.n);
    await this.store.set(key, seen);
    return { n: steps.trigger.event.body.n };
  },
})`;

const SLEEP = (ms: number) => `export default defineComponent({ async run({ steps }) { await new Promise((resolve) => setTimeout(resolve, ${ms})); return { n: steps.trigger.event.body.n }; } })`;

async function post(url: string, body: unknown): Promise<number> {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await answer.arrayBuffer();
  return answer.status;
}

/** Every run of the workflow (all pages), oldest event first. */
async function allRuns(server: TestServer, key: string, workflowId: string): Promise<any[]> {
  const runs: any[] = [];
  let after: string | null = null;
  for (;;) {
    const answer: { status: number; body: any } = await call(server.url, "GET", `/v1/workflows/${workflowId}/runs?limit=100${after ? `&after=${after}` : ""}`, { key });
    expect(answer.status).toBe(200);
    runs.push(...answer.body.data);
    if (answer.body.data.length < 100) break;
    after = answer.body.data[answer.body.data.length - 1].id;
  }
  return runs.sort((a, b) => compareEventIds(a.trigger.event_id, b.trigger.event_id));
}

/** The most runs in flight at once, from their recorded start and end. */
function mostAtOnce(runs: any[]): number {
  const edges = runs.flatMap((run) => [
    { at: run.started_at_ms, step: 1 },
    { at: run.finished_at_ms, step: -1 },
  ]);
  // An end at the very millisecond of a start frees the slot first.
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (now += edge.step));
  return most;
}

function expectSerialInArrivalOrder(runs: any[]): void {
  for (let index = 1; index < runs.length; index += 1) {
    // Sorted by event id (arrival): each started after the one before it ended.
    expect(runs[index].started_at_ms).toBeGreaterThanOrEqual(runs[index - 1].finished_at_ms);
  }
}

describe.each(MODES)("the run gate ($name)", (mode) => {
  let server: TestServer;
  let key: string;
  let drop: () => Promise<void>;
  /** BullMQ's key prefix, with a shared queue. */
  let namespace: string | undefined;

  beforeAll(async () => {
    const setup = await mode.env();
    drop = setup.drop;
    namespace = setup.env.RUNNEL_QUEUE_NAMESPACE;
    server = await startTestServer(setup.env);
    key = (await createUser(server, "gatekeeper")).key;
  });
  afterAll(async () => {
    await server?.close();
    await drop?.();
  });

  async function storeValue(store: string, recordKey: string): Promise<unknown> {
    const answer = await call(server.url, "GET", `/v1/data_stores/${store}/records/${recordKey}`, { key });
    return answer.status === 200 ? answer.body.data.value : undefined;
  }

  async function gateOf(workflowId: string): Promise<any> {
    const answer = await call(server.url, "GET", `/v1/workflows/${workflowId}`, { key });
    expect(answer.status).toBe(200);
    return answer.body.data.gate;
  }

  it("concurrency 1 runs 100 events sent at once one at a time, in the order they arrived, none lost", async () => {
    const store = `fifo-${mode.name.length}`;
    const workflow = await createWorkflow(server, key, {
      name: "Fifo",
      trigger: { type: "http" },
      steps: [{ name: "append", code: APPEND_TO_LIST, props: { store } }],
      settings: { concurrency: 1 },
    });
    expect(workflow.settings.concurrency).toBe(1);
    const jobsBefore = await completedJobs();
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, n) => post(workflow.trigger.endpoint_url, { n })));
    expect(statuses.every((status) => status === 200)).toBe(true);
    const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.length === 100, "100 runs", 60_000);
    expect(runs.every((run) => run.status === "success")).toBe(true);
    expectSerialInArrivalOrder(runs);
    // The list written by read-modify-write is whole, and in arrival order.
    expect(await storeValue(store, "seen-all")).toEqual(runs.map((run) => run.trigger.event.body.n));
    const gate = await gateOf(workflow.id);
    expect(gate).toEqual({ waiting: 0, in_flight: 0, throttled: 0, oldest_waiting_ms: null, next_start_at_ms: null });
    // With BullMQ, an event admitted when the run before it was recorded runs in the process that recorded it, as
    // the store's row (DeliveryWorker.takeAdmitted): only those admitted on arrival went through the shared queue.
    if (namespace) expect((await completedJobs())! - jobsBefore!).toBeLessThan(10);
  }, 90_000);

  /** The jobs BullMQ completed and keeps (two minutes), with a shared queue. */
  async function completedJobs(): Promise<number | undefined> {
    if (!namespace) return undefined;
    const redis = new Redis(REDIS_URL);
    try {
      return await redis.zcard(`${namespace}:deliveries:completed`);
    } finally {
      await redis.quit();
    }
  }

  it("concurrency 2 never has more than 2 runs in flight", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Two at once",
      trigger: { type: "http" },
      steps: [{ name: "sleep", code: SLEEP(150) }],
      settings: { concurrency: 2 },
    });
    await Promise.all(Array.from({ length: 12 }, (_, n) => post(workflow.trigger.endpoint_url, { n })));
    const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.length === 12, "12 runs", 30_000);
    expect(mostAtOnce(runs)).toBe(2);
  }, 60_000);

  it("concurrency_key serialises each key's runs in order, while keys go on side by side", async () => {
    const store = `keys-${mode.name.length}`;
    const workflow = await createWorkflow(server, key, {
      name: "Per customer",
      trigger: { type: "http" },
      steps: [
        { name: "append", code: APPEND_TO_LIST, props: { store } },
        { name: "sleep", code: SLEEP(20) },
      ],
      settings: { concurrency: 1, concurrency_key: "{{ steps.trigger.event.body.customer }}" },
    });
    await Promise.all(Array.from({ length: 40 }, (_, n) => post(workflow.trigger.endpoint_url, { n, customer: n % 2 === 0 ? "a" : "b" })));
    const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.length === 40, "40 runs", 30_000);
    for (const customer of ["a", "b"]) {
      const own = runs.filter((run) => run.trigger.event.body.customer === customer);
      expect(own).toHaveLength(20);
      expectSerialInArrivalOrder(own);
      expect(await storeValue(store, `seen-${customer}`)).toEqual(own.map((run) => run.trigger.event.body.n));
    }
    // One line per key: the two keys' runs overlapped (not one line for all).
    expect(mostAtOnce(runs)).toBe(2);
  }, 60_000);

  it("rate_limit 5 per second: all 15 runs happen, about 5 starting per second", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Throttled",
      trigger: { type: "http" },
      steps: [{ name: "quick", code: SLEEP(0) }],
      settings: { rate_limit: { runs: 5, per_seconds: 1 } },
    });
    expect(workflow.settings.rate_limit).toEqual({ runs: 5, per_seconds: 1 });
    await Promise.all(Array.from({ length: 15 }, (_, n) => post(workflow.trigger.endpoint_url, { n })));
    // While throttled, the wait is visible: runs held back, and when the next may start.
    const held = await gateOf(workflow.id);
    expect(held.throttled).toBeGreaterThan(0);
    expect(held.next_start_at_ms).toBeGreaterThan(Date.now() - 1_000);
    const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.length === 15, "15 runs", 30_000);
    const starts = runs.map((run) => run.started_at_ms).sort((a, b) => a - b);
    // The gate admits at most 5 per second, each with its start time (checked to the ms by the store contract,
    // test/store/gate-contract.ts); a run starts when its queue hands it over, a few ms to a few hundred after
    // that time (the first window's most: they come with the burst of appends), so the recorded starts are checked
    // with a margin of 500 ms. Without the gate all 15 start within a few ms of each other.
    for (let index = 5; index < starts.length; index += 1) expect(starts[index]! - starts[index - 5]!).toBeGreaterThanOrEqual(500);
    expect(starts[14]! - starts[0]!).toBeGreaterThanOrEqual(1_800);
    // And not much later than their time: a throttled run is claimed when it falls due, not a poll (1 s) after.
    expect(starts[14]! - starts[0]!).toBeLessThan(3_500);
  }, 60_000);

  it("shows the events waiting at the gate, and how long the oldest has waited", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Slow line",
      trigger: { type: "http" },
      steps: [{ name: "sleep", code: SLEEP(700) }],
      settings: { concurrency: 1 },
    });
    const sentAt = Date.now();
    for (let n = 0; n < 4; n += 1) expect(await post(workflow.trigger.endpoint_url, { n })).toBe(200);
    const gate = await gateOf(workflow.id);
    expect(gate.in_flight).toBe(1);
    expect(gate.waiting).toBe(3);
    expect(gate.oldest_waiting_ms).toBeGreaterThanOrEqual(sentAt - 5);
    const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.length === 4, "4 runs", 20_000);
    expectSerialInArrivalOrder(runs);
    expect((await gateOf(workflow.id)).waiting).toBe(0);
  }, 30_000);

  it("cancels a waiting event through the engine: it never runs, its run is recorded cancelled, and the line goes on", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Cancel in line",
      trigger: { type: "http" },
      steps: [{ name: "sleep", code: SLEEP(600) }],
      settings: { concurrency: 1 },
    });
    for (let n = 0; n < 3; n += 1) expect(await post(workflow.trigger.endpoint_url, { n })).toBe(200);
    const events = (await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}/event_summaries?expand=event`, { key })).body.data as any[];
    const third = events.find((event) => event.event.body.n === 2);
    expect(third).toBeDefined();
    const ownerId = (await call(server.url, "GET", "/v1/users/me", { key })).body.data.id as string;
    const cancelled = await server.server.engine.workflows.cancelWaiting(ownerId, workflow.id, third.id);
    expect(cancelled).toMatchObject({ status: "cancelled", eventId: third.id });
    // Not waiting any more: a second cancel finds nothing.
    expect(await server.server.engine.workflows.cancelWaiting(ownerId, workflow.id, third.id)).toBeNull();
    const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.length === 3 && runs.filter((run) => run.status === "success").length === 2, "two runs and the cancelled one", 20_000);
    expect(runs.map((run) => [run.trigger.event.body.n, run.status])).toEqual([
      [0, "success"],
      [1, "success"],
      [2, "cancelled"],
    ]);
  }, 30_000);

  it("lists the waiting events in line order and cancels one through the API: it never runs, the others run in order", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Waiting list",
      trigger: { type: "http" },
      // The first run is long: the three behind it wait while the test looks.
      steps: [{ name: "sleep", code: `export default defineComponent({ async run({ steps }) { await new Promise((resolve) => setTimeout(resolve, steps.trigger.event.body.n === 0 ? 2500 : 200)); return { n: steps.trigger.event.body.n }; } })` }],
      settings: { concurrency: 1 },
    });
    for (let n = 0; n < 4; n += 1) expect(await post(workflow.trigger.endpoint_url, { n })).toBe(200);
    const events = (await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}/event_summaries?expand=event`, { key })).body.data as any[];
    const eventOf = (n: number): string => events.find((event) => event.event.body.n === n).id;
    const listed = await call(server.url, "GET", `/v1/workflows/${workflow.id}/waiting`, { key });
    expect(listed.status).toBe(200);
    expect(listed.body.page_info).toMatchObject({ total_count: 3, count: 3, start_cursor: eventOf(1), end_cursor: eventOf(3) });
    expect(listed.body.data.map((item: any) => [item.event_id, item.key, item.position])).toEqual([
      [eventOf(1), null, 1],
      [eventOf(2), null, 2],
      [eventOf(3), null, 3],
    ]);
    expect(listed.body.data[0].emitter_id).toBe(workflow.trigger.source_id);
    // Paged in line order by event id.
    const second = await call(server.url, "GET", `/v1/workflows/${workflow.id}/waiting?limit=1&after=${eventOf(1)}`, { key });
    expect(second.body.data.map((item: any) => item.event_id)).toEqual([eventOf(2)]);

    const cancelled = await call(server.url, "POST", `/v1/workflows/${workflow.id}/waiting/${eventOf(2)}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ status: "cancelled", trigger: { event_id: eventOf(2) } });
    // Not waiting any more: 404 naming the event and saying how to cancel a running one.
    const again = await call(server.url, "POST", `/v1/workflows/${workflow.id}/waiting/${eventOf(2)}/cancel`, { key });
    expect(again.status).toBe(404);
    expect(again.body.error.message).toContain(eventOf(2));
    expect(again.body.error.message).toContain("/cancel");
    const running = await call(server.url, "POST", `/v1/workflows/${workflow.id}/waiting/${eventOf(0)}/cancel`, { key });
    expect(running.status).toBe(404);
    // A cursor whose event left the gate is a 400 naming the parameter; an unknown workflow a 404.
    const stale = await call(server.url, "GET", `/v1/workflows/${workflow.id}/waiting?after=${eventOf(2)}`, { key });
    expect(stale.status).toBe(400);
    expect(stale.body.error.details.field).toBe("after");
    expect((await call(server.url, "GET", "/v1/workflows/p_nosuchworkflow/waiting", { key })).status).toBe(404);
    const after = await call(server.url, "GET", `/v1/workflows/${workflow.id}/waiting`, { key });
    expect(after.body.data.map((item: any) => [item.event_id, item.position])).toEqual([
      [eventOf(1), 1],
      [eventOf(3), 2],
    ]);

    const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.filter((run) => run.status === "success").length === 3, "three runs and the cancelled one", 20_000);
    expect(runs.map((run) => [run.trigger.event.body.n, run.status])).toEqual([
      [0, "success"],
      [1, "success"],
      [2, "cancelled"],
      [3, "success"],
    ]);
    expectSerialInArrivalOrder(runs.filter((run) => run.status === "success"));
    // The cancelled event never ran: no step of it recorded.
    expect(runs[2].steps ?? []).toEqual([]);
    expect((await call(server.url, "GET", `/v1/workflows/${workflow.id}/waiting`, { key })).body).toMatchObject({ page_info: { total_count: 0 }, data: [] });
  }, 30_000);

  it("refuses gate settings out of range at save, naming the setting", async () => {
    const refused = async (settings: unknown) => {
      const answer = await call(server.url, "POST", "/v1/workflows", { key, json: { name: "Bad gate", steps: [{ name: "a", code: SLEEP(0) }], settings } });
      expect(answer.status).toBe(400);
      return answer.body.error.details;
    };
    expect((await refused({ concurrency: 0 })).field).toBe("settings.concurrency");
    expect((await refused({ concurrency: 1.5 })).field).toBe("settings.concurrency");
    expect((await refused({ concurrency: 1, concurrency_key: "{{ steps.first.x }}" })).field).toBe("settings.concurrency_key");
    expect((await refused({ concurrency: 1, concurrency_key: "{{ steps.trigger.event.body[ }}" })).field).toBe("settings.concurrency_key");
    expect((await refused({ concurrency_key: "{{ steps.trigger.event.body.id }}" })).field).toBe("settings.concurrency_key");
    expect((await refused({ rate_limit: { runs: 0, per_seconds: 1 } })).field).toBe("settings.rate_limit.runs");
    expect((await refused({ rate_limit: { runs: 5, per_seconds: 0 } })).field).toBe("settings.rate_limit.per_seconds");
    expect((await refused({ rate_limit: 5 })).field).toBe("settings.rate_limit");
    // A workflow without them keeps the settings it always had.
    const plain = await createWorkflow(server, key, { name: "No gate", steps: [{ name: "a", code: SLEEP(0) }] });
    expect(Object.keys(plain.settings).sort()).toEqual(["error_notifications", "error_retention"]);
    expect(plain.gate).toBeUndefined();
  });
});

describe("the run gate across a restart of the embedded server (SQLite)", () => {
  it("keeps the waiting events in the store: after a restart they run, one at a time, in arrival order", async () => {
    let server = await startTestServer({}, { keepData: true });
    const dataDir = server.dataDir;
    try {
      const key = (await createUser(server, "restarter")).key;
      const workflow = await createWorkflow(server, key, {
        name: "Line across a restart",
        trigger: { type: "http" },
        steps: [{ name: "sleep", code: SLEEP(400) }],
        settings: { concurrency: 1 },
      });
      for (let n = 0; n < 5; n += 1) expect(await post(workflow.trigger.endpoint_url, { n })).toBe(200);
      const waitingBefore = (await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key })).body.data.gate.waiting;
      expect(waitingBefore).toBeGreaterThanOrEqual(3);
      await server.close();
      server = await startTestServer({}, { dataDir, keepData: true });
      const runs = await waitFor(() => allRuns(server, key, workflow.id), (runs) => runs.length === 5, "the five runs after the restart", 20_000);
      expect(runs.every((run) => run.status === "success")).toBe(true);
      expectSerialInArrivalOrder(runs);
      expect(runs.map((run) => run.trigger.event.body.n)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
