import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareEventIds } from "../../src/domain/event-ids.js";
import { createClusterFixture, waitFor, type ClusterFixture } from "../helpers/test-cluster.js";
import { call } from "../helpers/server.js";
import type { ServerProcess } from "../../src/chaos/server-process.js";

/**
 * The run gate on the scale-out mode: an api process and two worker
 * processes of the built binary (`node scripts/build.mjs` first) on one
 * PostgreSQL schema, the job queue on Redis. 1,000 events of a workflow of
 * concurrency 1 are sent at once to the api process; mid-stream a second
 * worker joins and the first, which ran the line so far, is SIGKILLed. A
 * run it held is taken over after its lease (5 s) by the other worker, and
 * the line goes on: every event's run is recorded once, one at a time, in
 * the order the events arrived.
 */

const EVENTS = 1_000;

/** Appends n to a list by read-modify-write: a run beside another would lose a write; the list shows the order of completions. */
const APPEND_TO_LIST = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps }) {
    const seen = (await this.store.get("seen")) ?? [];
    seen.push(steps.trigger.event.body.n);
    await this.store.set("seen", seen);
    return { n: steps.trigger.event.body.n };
  },
})`;

describe("the run gate across processes (BullMQ on Redis)", () => {
  let fixture: ClusterFixture;
  let api: ServerProcess;
  const workers: ServerProcess[] = [];
  let adminKey: string;

  beforeAll(async () => {
    fixture = await createClusterFixture("redis", "runnel_gate", { RUNNEL_DELIVERY_LEASE_SECONDS: "5" });
    const started = await fixture.start("api");
    api = started.server;
    adminKey = await fixture.adminKeyOf(started.dataDir);
    workers.push((await fixture.start("worker")).server);
  }, 180_000);
  afterAll(async () => {
    await fixture?.stop();
  }, 60_000);

  async function allRuns(workflowId: string): Promise<any[]> {
    const runs: any[] = [];
    let after: string | null = null;
    for (;;) {
      const answer = await call(api.url, "GET", `/v1/workflows/${workflowId}/runs?limit=100${after ? `&after=${after}` : ""}`, { key: adminKey });
      expect(answer.status).toBe(200);
      runs.push(...answer.body.data);
      if (answer.body.data.length < 100) break;
      after = answer.body.data[answer.body.data.length - 1].id;
    }
    return runs;
  }

  it("keeps 1,000 events in arrival order, one at a time, across a SIGKILL of the worker running them", async () => {
    const created = await call(api.url, "POST", "/v1/workflows", {
      key: adminKey,
      json: { name: "Fifo across processes", trigger: { type: "http" }, steps: [{ name: "append", code: APPEND_TO_LIST, props: { store: "gate-line" } }], settings: { concurrency: 1 } },
    });
    expect(created.status).toBe(200);
    const workflow = created.body.data;
    const startedAt = Date.now();
    // Sent 50 at a time: arrival order is the order of the events' ids, whatever the order of sending.
    for (let from = 0; from < EVENTS; from += 50) {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: from + index }) }).then(async (answer) => {
            await answer.arrayBuffer();
            return answer.status;
          }),
        ),
      );
      expect(statuses.every((status) => status === 200)).toBe(true);
    }
    // Mid-stream: a second worker joins, and the first, which ran the line so far (and likely holds its run now), is killed.
    await waitFor(() => allRuns(workflow.id), (runs) => runs.length >= 100, "100 runs", 60_000);
    workers.push((await fixture.start("worker")).server);
    await workers[0]!.kill();
    const killedAt = Date.now();

    const runs = await waitFor(() => allRuns(workflow.id), (runs) => runs.length === EVENTS, `${EVENTS} runs`, 120_000);
    const elapsed = Date.now() - startedAt;
    runs.sort((a, b) => compareEventIds(a.trigger.event_id, b.trigger.event_id));
    expect(new Set(runs.map((run) => run.trigger.event_id)).size).toBe(EVENTS);
    expect(runs.every((run) => run.status === "success")).toBe(true);
    for (let index = 1; index < runs.length; index += 1) expect(runs[index].started_at_ms).toBeGreaterThanOrEqual(runs[index - 1].finished_at_ms);
    // The kill was mid-stream: the line went on in the survivor.
    expect(runs.filter((run) => run.started_at_ms > killedAt).length).toBeGreaterThan(0);
    expect(runs.filter((run) => run.finished_at_ms < killedAt).length).toBeGreaterThan(0);
    // Completed in arrival order: the list is the events in id order, but for the killed run, which may have
    // written before it died and then again when taken over (its record was never made: it ran to completion once).
    const seen = (await call(api.url, "GET", "/v1/data_stores/gate-line/records/seen", { key: adminKey })).body.data.value as number[];
    const deduped = seen.filter((n, index) => index === 0 || n !== seen[index - 1]);
    expect(deduped).toEqual(runs.map((run) => run.trigger.event.body.n));
    expect(seen.length - deduped.length).toBeLessThanOrEqual(1);
    console.log(`gate across processes: ${EVENTS} runs in ${elapsed} ms`);
  }, 240_000);
});
