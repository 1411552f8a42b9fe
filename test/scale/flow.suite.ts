import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterFixture, waitFor, type ClusterFixture } from "../helpers/test-cluster.js";
import { call } from "../helpers/server.js";
import type { ServerProcess } from "../../src/chaos/server-process.js";

/**
 * $.flow.delay and cancel on the scale-out mode: an api process and worker
 * processes of the built binary (`node scripts/build.mjs` first) on one
 * PostgreSQL schema, the job queue on Redis. A run delayed in one worker
 * resumes in another (the first is stopped while it waits); runs delayed or
 * running in a worker are cancelled through the api process.
 */

const COUNT = (name: string) => `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps, $ }) {
    const key = "${name}-" + steps.trigger.event.tag;
    const runs = ((await this.store.get(key)) ?? 0) + 1;
    await this.store.set(key, runs);
    $.export("mark", "from the first process");
    return { runs };
  },
})`;

const STORE = "flow-counters";

const DELAYED_WORKFLOW = {
  name: "Delayed across processes",
  steps: [
    { name: "first", props: { store: STORE }, code: COUNT("first") },
    { name: "wait", code: `export default defineComponent({ async run({ steps, $ }) { $.export("urls", $.flow.delay(steps.trigger.event.ms)); return "waited"; } })` },
    { name: "after", code: `export default defineComponent({ async run({ steps }) { return { first: steps.first.$return_value, mark: steps.first.mark }; } })` },
    { name: "last", props: { store: STORE }, code: COUNT("last") },
  ],
};

describe("$.flow.delay and cancel across processes (BullMQ on Redis)", () => {
  let fixture: ClusterFixture;
  let api: ServerProcess;
  let firstWorker: ServerProcess;
  let adminKey: string;
  let workflowId: string;

  beforeAll(async () => {
    fixture = await createClusterFixture("redis", "runnel_flow");
    const started = await fixture.start("api");
    api = started.server;
    adminKey = await fixture.adminKeyOf(started.dataDir);
    firstWorker = (await fixture.start("worker")).server;
    const created = await call(api.url, "POST", "/v1/workflows", { key: adminKey, json: DELAYED_WORKFLOW });
    expect(created.status).toBe(200);
    workflowId = created.body.data.id;
  }, 180_000);
  afterAll(async () => {
    await fixture?.stop();
  }, 60_000);

  const storeValue = async (recordKey: string) => {
    const answer = await call(api.url, "GET", `/v1/data_stores/${STORE}/records/${recordKey}`, { key: adminKey });
    return answer.status === 200 ? answer.body.data.value : undefined;
  };
  const getRun = (runId: string) => call(api.url, "GET", `/v1/runs/${runId}`, { key: adminKey }).then((answer) => (answer.status === 200 ? answer.body.data : null));
  const runNow = async (id: string, event: unknown) => {
    const queued = await call(api.url, "POST", `/v1/workflows/${id}/runs`, { key: adminKey, json: { event } });
    expect(queued.status).toBe(202);
    return queued.body.data.run_id as string;
  };

  it("resumes a delayed run in another worker process, with the earlier step's results and without running it again", async () => {
    const runId = await runNow(workflowId, { tag: "a", ms: 2500 });
    const waiting = await waitFor(() => getRun(runId), (run) => run?.status === "delayed", "the delayed run");
    expect(waiting.steps[1].exports.urls.resume_url).toContain(`/flow/`);

    // The process that ran the first steps goes; the rest can only run in the one started now.
    await firstWorker.stop();
    await fixture.start("worker");

    const run = await waitFor(() => getRun(runId), (run) => run.status !== "delayed", "the run to resume and end", 60_000);
    expect(run.status).toBe("success");
    expect(run.steps[2].$return_value).toEqual({ first: { runs: 1 }, mark: "from the first process" });
    expect(await storeValue("first-a")).toBe(1);
    expect(await storeValue("last-a")).toBe(1);
  }, 120_000);

  it("resumes at once, through the api process, a run delayed in a worker, when its resume URL is called", async () => {
    const runId = await runNow(workflowId, { tag: "u", ms: 600_000 });
    const waiting = await waitFor(() => getRun(runId), (run) => run?.status === "delayed", "the delayed run");
    // Made in a worker: its origin is the public URL (RUNNEL_PUBLIC_URL, which a cluster sets to its api); here, the api's own.
    const url = new URL(waiting.steps[1].exports.urls.resume_url);
    const resumed = await fetch(`${api.url}${url.pathname}`, { method: "POST" });
    expect(resumed.status).toBe(202);
    const run = await waitFor(() => getRun(runId), (run) => run.status !== "delayed", "the run to resume", 30_000);
    expect(run.status).toBe("success");
    expect(await storeValue("first-u")).toBe(1);
  }, 60_000);

  it("cancels, from the api process, a run delayed in a worker: it never resumes", async () => {
    const runId = await runNow(workflowId, { tag: "c", ms: 1500 });
    await waitFor(() => getRun(runId), (run) => run?.status === "delayed", "the delayed run");
    const answer = await call(api.url, "POST", `/v1/runs/${runId}/cancel`, { key: adminKey });
    expect(answer.status).toBe(200);
    expect(answer.body.data.status).toBe("cancelled");
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await getRun(runId)).toMatchObject({ status: "cancelled" });
    expect(await storeValue("last-c")).toBeUndefined();
  }, 60_000);

  it("cancels, from the api process, a run running in a worker: it stops before its next step", async () => {
    const created = await call(api.url, "POST", "/v1/workflows", {
      key: adminKey,
      json: {
        name: "Slow across processes",
        steps: [
          { name: "slow", code: `export default defineComponent({ async run() { await new Promise((resolve) => setTimeout(resolve, 3000)); return "slow done"; } })` },
          { name: "last", props: { store: STORE }, code: COUNT("last") },
        ],
      },
    });
    const runId = await runNow(created.body.data.id, { tag: "r" });
    const answer = await waitFor(() => call(api.url, "POST", `/v1/runs/${runId}/cancel`, { key: adminKey }), (answer) => answer.status !== 404, "the run to be running in the worker", 30_000);
    expect(answer.status).toBe(202);
    const run = await waitFor(() => getRun(runId), (run) => run !== null, "the cancelled run's record", 30_000);
    expect(run.status).toBe("cancelled");
    expect(await storeValue("last-r")).toBeUndefined();
  }, 60_000);
});
