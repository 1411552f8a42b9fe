import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareEventIds } from "../../src/domain/event-ids.js";
import { createClusterFixture, waitFor, type ClusterFixture } from "../helpers/test-cluster.js";
import { call } from "../helpers/server.js";
import type { ServerProcess } from "../../src/chaos/server-process.js";

/**
 * The run gate on the scale-out mode: an api process and two worker
 * processes of the built binary (`node scripts/build.mjs` first) on one
 * PostgreSQL schema, the job queue on Redis. 1,000 events of a workflow of
 * concurrency 1 are sent at once to the api process; two workers, the
 * second held stopped while the first runs the line alone; mid-stream the
 * first is SIGKILLed (it holds the line's run) and the second let go. The
 * killed run is taken over after its lease (5 s), and the line goes on:
 * every event's run completes once, one at a time, in arrival order.
 */

const EVENTS = 1_000;

/**
 * Records the event before it in its $.service.db, which is written with the
 * run's record (a run killed before its record leaves nothing there): each
 * run answers the n of the run recorded before it, and how many were.
 */
const CHAIN = `export default defineComponent({
  props: { db: "$.service.db" },
  async run({ steps }) {
    const prev = this.db.get("last") ?? null;
    const count = (this.db.get("count") ?? 0) + 1;
    this.db.set("last", steps.trigger.event.body.n);
    this.db.set("count", count);
    return { n: steps.trigger.event.body.n, prev, count };
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
    // The second worker is started now but stopped (SIGSTOP) until the first is killed: the first runs the line alone,
    // so that at the kill it holds the line's run for certain.
    workers.push((await fixture.start("worker")).server, (await fixture.start("worker")).server);
    process.kill(workers[1]!.pid!, "SIGSTOP");
  }, 180_000);
  afterAll(async () => {
    // A worker left stopped (a failure before it was let go) would not hear its stop.
    if (workers[1]?.pid) process.kill(workers[1].pid, "SIGCONT");
    await fixture?.stop();
  }, 60_000);

  async function allRuns(workflowId: string): Promise<any[]> {
    const runs: any[] = [];
    let after: string | null = null;
    for (;;) {
      const answer: { status: number; body: any } = await call(api.url, "GET", `/v1/workflows/${workflowId}/runs?limit=100${after ? `&after=${after}` : ""}`, { key: adminKey });
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
      json: { name: "Fifo across processes", trigger: { type: "http" }, steps: [{ name: "chain", code: CHAIN }], settings: { concurrency: 1 } },
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
    // Mid-stream: the worker running the line is killed, and the other goes on.
    await waitFor(() => allRuns(workflow.id), (runs) => runs.length >= 100, "100 runs", 60_000);
    await workers[0]!.kill();
    const killedAt = Date.now();
    process.kill(workers[1]!.pid!, "SIGCONT");

    const runs = await waitFor(() => allRuns(workflow.id), (runs) => runs.length === EVENTS, `${EVENTS} runs`, 120_000);
    const elapsed = Date.now() - startedAt;
    runs.sort((a, b) => compareEventIds(a.trigger.event_id, b.trigger.event_id));
    expect(new Set(runs.map((run) => run.trigger.event_id)).size).toBe(EVENTS);
    expect(runs.every((run) => run.status === "success")).toBe(true);
    for (let index = 1; index < runs.length; index += 1) expect(runs[index].started_at_ms).toBeGreaterThanOrEqual(runs[index - 1].finished_at_ms);
    // The kill was mid-stream: the line went on in the survivor, after the killed run's lease (taken over, not skipped).
    expect(runs.filter((run) => run.started_at_ms > killedAt).length).toBeGreaterThan(0);
    expect(runs.filter((run) => run.finished_at_ms < killedAt).length).toBeGreaterThan(0);
    const gaps = runs.slice(1).map((run, index) => run.started_at_ms - runs[index].finished_at_ms);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(4_000);
    // Each run saw the one recorded before it, in arrival order: what the killed run did was never recorded, and
    // its event ran to completion once, in its turn.
    runs.forEach((run, index) => {
      expect(run.steps[0].$return_value).toEqual({ n: run.trigger.event.body.n, prev: index === 0 ? null : runs[index - 1].trigger.event.body.n, count: index + 1 });
    });
    console.log(`gate across processes: ${EVENTS} runs in ${elapsed} ms`);
  }, 240_000);
});
