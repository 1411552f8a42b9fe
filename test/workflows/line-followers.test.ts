import { describe, expect, it } from "vitest";
import { compareEventIds } from "../../src/domain/event-ids.js";
import { call } from "../helpers/server.js";
import { createWorkflow, waitFor } from "./helpers.js";
import { modes, serverOnMode } from "./modes.js";

/**
 * A one-at-a-time line's chains, end to end through a real server on each
 * mode (SQLite and PostgreSQL with the local queue, PostgreSQL with BullMQ
 * on Redis): the record that admits a line's next event hands it over with
 * the next waiting ones, which that process runs one after the other and
 * records together. What a user sees must not change: one run at
 * a time in arrival order, each seeing what the one before it wrote, a
 * follower's retries holding the line, and a waiting event cancellable
 * until it starts.
 */

/** Counts in its step's `$.service.db` (read before a batch, written back with its record): a run that read a stale count would repeat one. */
const COUNTER = `export default defineComponent({
  props: { db: "$.service.db" },
  async run({ steps }) {
    const count = (this.db.get("count") ?? 0) + 1;
    this.db.set("count", count);
    return { n: steps.trigger.event.body.n, count };
  },
})`;

/** The event with n = 3 fails its first two tries (counted in the step's `$.service.db`); every run appends its n to a data store list. */
const FLAKY_THIRD = `export default defineComponent({
  props: { db: "$.service.db", store: { type: "data_store" } },
  async run({ steps }) {
    const n = steps.trigger.event.body.n;
    const tries = (this.db.get("tries-" + n) ?? 0) + 1;
    this.db.set("tries-" + n, tries);
    if (n === 3 && tries < 3) throw new Error("flaky: try " + tries);
    const seen = (await this.store.get("seen")) ?? [];
    seen.push(n);
    await this.store.set("seen", seen);
    return { n, tries };
  },
})`;

/** The event with n = 1 takes a while (the others wait behind it); every run appends its n to a data store list. */
const SLOW_SECOND = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps }) {
    const n = steps.trigger.event.body.n;
    await new Promise((resolve) => setTimeout(resolve, n === 1 ? 1500 : 20));
    const seen = (await this.store.get("seen")) ?? [];
    seen.push(n);
    await this.store.set("seen", seen);
    return { n };
  },
})`;

async function post(url: string, body: unknown): Promise<number> {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await answer.arrayBuffer();
  return answer.status;
}

const MODES = modes("runnel_chain");

describe.each(MODES)("a one-at-a-time line's chains ($name)", (mode) => {
  const held = serverOnMode(mode, "chains");

  async function allRuns(workflowId: string): Promise<any[]> {
    const answer = await call(held.server.url, "GET", `/v1/workflows/${workflowId}/runs?limit=100`, { key: held.key });
    expect(answer.status).toBe(200);
    return (answer.body.data as any[]).sort((a, b) => compareEventIds(a.trigger.event_id, b.trigger.event_id));
  }

  async function storeValue(store: string, recordKey: string): Promise<unknown> {
    const answer = await call(held.server.url, "GET", `/v1/data_stores/${store}/records/${recordKey}`, { key: held.key });
    return answer.status === 200 ? answer.body.data.value : undefined;
  }

  function expectSerialInArrivalOrder(runs: any[]): void {
    for (let index = 1; index < runs.length; index += 1) expect(runs[index].started_at_ms).toBeGreaterThanOrEqual(runs[index - 1].finished_at_ms);
  }

  it("runs 60 events at once one at a time, in order, each seeing the step store as the run before it left it", async () => {
    const workflow = await createWorkflow(held.server, held.key, { name: "Counted line", trigger: { type: "http" }, steps: [{ name: "count", code: COUNTER }], settings: { concurrency: 1 } });
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, n) => post(workflow.trigger.endpoint_url, { n })));
    expect(statuses.every((status) => status === 200)).toBe(true);
    const runs = await waitFor(() => allRuns(workflow.id), (runs) => runs.length === 60 && runs.every((run) => run.status === "success"), "60 runs", 60_000);
    expectSerialInArrivalOrder(runs);
    // Counts 1 to 60 in arrival order: no run read a count a run before it had not written back yet.
    expect(runs.map((run) => run.steps[0].$return_value.count)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  }, 90_000);

  it("holds the line while a follower waits to retry: the events behind it run after its third try", async () => {
    const store = "flaky-line";
    const workflow = await createWorkflow(held.server, held.key, {
      name: "Flaky line",
      trigger: { type: "http" },
      steps: [{ name: "flaky", code: FLAKY_THIRD, props: { store } }],
      settings: { concurrency: 1, retries: { max: 3, backoff: "fixed", delay_ms: 200 } },
    });
    const statuses = await Promise.all(Array.from({ length: 8 }, (_, n) => post(workflow.trigger.endpoint_url, { n })));
    expect(statuses.every((status) => status === 200)).toBe(true);
    const runs = await waitFor(() => allRuns(workflow.id), (runs) => runs.length === 8 && runs.every((run) => run.status === "success"), "8 runs", 30_000);
    // In arrival order (requests sent at once arrive in any order): each ran once, the flaky one three times.
    const arrived = runs.map((run) => run.trigger.event.body.n as number);
    expect(runs.map((run) => run.steps[0].$return_value)).toEqual(arrived.map((n) => ({ n, tries: n === 3 ? 3 : 1 })));
    expectSerialInArrivalOrder(runs);
    expect(await storeValue(store, "seen")).toEqual(arrived);
  }, 60_000);

  it("cancels an event a chain holds before it starts: recorded cancelled, never run, and the line goes on in order", async () => {
    const store = "cancel-line";
    const workflow = await createWorkflow(held.server, held.key, { name: "Cancel in a chain", trigger: { type: "http" }, steps: [{ name: "slow", code: SLOW_SECOND, props: { store } }], settings: { concurrency: 1 } });
    for (let n = 0; n < 5; n += 1) expect(await post(workflow.trigger.endpoint_url, { n })).toBe(200);
    const events = (await call(held.server.url, "GET", `/v1/sources/${workflow.trigger.source_id}/event_summaries?expand=event`, { key: held.key })).body.data as any[];
    const eventOf = (n: number): string => events.find((event) => event.event.body.n === n).id;
    // The first run's record admitted the slow second, which took the three behind it as followers: still waiting to the user.
    await waitFor(() => allRuns(workflow.id), (runs) => runs.length === 1, "the first run", 10_000);
    const listed = await call(held.server.url, "GET", `/v1/workflows/${workflow.id}/waiting`, { key: held.key });
    expect(listed.body.data.map((item: any) => [item.event_id, item.position])).toEqual([
      [eventOf(2), 1],
      [eventOf(3), 2],
      [eventOf(4), 3],
    ]);
    const cancelled = await call(held.server.url, "POST", `/v1/workflows/${workflow.id}/waiting/${eventOf(3)}/cancel`, { key: held.key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ status: "cancelled", trigger: { event_id: eventOf(3) } });
    // Cancelled once: not waiting any more.
    expect((await call(held.server.url, "POST", `/v1/workflows/${workflow.id}/waiting/${eventOf(3)}/cancel`, { key: held.key })).status).toBe(404);
    const runs = await waitFor(() => allRuns(workflow.id), (runs) => runs.length === 5 && runs.filter((run) => run.status === "success").length === 4, "four runs and the cancelled one", 20_000);
    expect(runs.map((run) => [run.trigger.event.body.n, run.status])).toEqual([
      [0, "success"],
      [1, "success"],
      [2, "success"],
      [3, "cancelled"],
      [4, "success"],
    ]);
    // The run the cancel answered is the one recorded, and nothing of it ran.
    expect(runs[3].id).toBe(cancelled.body.data.id);
    expect(await storeValue(store, "seen")).toEqual([0, 1, 2, 4]);
    expectSerialInArrivalOrder(runs.filter((run) => run.status === "success"));
    expect((await call(held.server.url, "GET", `/v1/workflows/${workflow.id}`, { key: held.key })).body.data.gate).toMatchObject({ waiting: 0, in_flight: 0 });
  }, 40_000);
});
