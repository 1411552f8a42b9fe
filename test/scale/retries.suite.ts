import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterFixture, waitFor, type ClusterFixture } from "../helpers/test-cluster.js";
import { call } from "../helpers/server.js";
import type { ServerProcess } from "../../src/chaos/server-process.js";

/**
 * Retries on the scale-out mode: an api process and worker processes of the
 * built binary (`node scripts/build.mjs` first) on one PostgreSQL schema,
 * the job queue on Redis. A flaky step fails twice; after its first failure
 * the worker that ran it is stopped and another started, so the retries run
 * in another process: the run resumes at the failed step from what the
 * first process recorded, and the earlier step is not run again.
 */

const FLAKY_WORKFLOW = (store: string) => ({
  name: "Flaky across processes",
  trigger: { type: "http" },
  steps: [
    {
      name: "first",
      props: { store },
      code: `export default defineComponent({
        props: { store: { type: "data_store" } },
        async run({ steps, $ }) {
          const runs = ((await this.store.get("first")) ?? 0) + 1;
          await this.store.set("first", runs);
          $.export("mark", "from the first process");
          return { runs };
        },
      })`,
    },
    {
      name: "flaky",
      props: { store },
      code: `export default defineComponent({
        props: { store: { type: "data_store" } },
        async run({ steps }) {
          const tries = ((await this.store.get("flaky")) ?? 0) + 1;
          await this.store.set("flaky", tries);
          if (tries < 3) throw new Error("flaky: try " + tries);
          return { tries, saw: steps.first.mark };
        },
      })`,
    },
  ],
  settings: { retries: { max: 3, backoff: "fixed", delay_ms: 2000 } },
});

describe("retries across processes (BullMQ on Redis)", () => {
  let fixture: ClusterFixture;
  let api: ServerProcess;
  let firstWorker: ServerProcess;
  let adminKey: string;

  beforeAll(async () => {
    fixture = await createClusterFixture("redis", "runnel_retries");
    const started = await fixture.start("api");
    api = started.server;
    adminKey = await fixture.adminKeyOf(started.dataDir);
    firstWorker = (await fixture.start("worker")).server;
  }, 180_000);
  afterAll(async () => {
    await fixture?.stop();
  }, 60_000);

  const storeValue = async (recordKey: string) => {
    const answer = await call(api.url, "GET", `/v1/data_stores/retry-counters/records/${recordKey}`, { key: adminKey });
    return answer.status === 200 ? answer.body.data.value : undefined;
  };

  it("resumes a run at its failed step in another worker process, with the earlier step's results and without running it again", async () => {
    const created = await call(api.url, "POST", "/v1/workflows", { key: adminKey, json: FLAKY_WORKFLOW("retry-counters") });
    expect(created.status).toBe(200);
    const workflow = created.body.data;
    const posted = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(posted.status).toBe(200);
    const runs = () => call(api.url, "GET", `/v1/workflows/${workflow.id}/runs`, { key: adminKey }).then((answer) => answer.body.data as any[]);
    const [waiting] = await waitFor(runs, (listed) => listed[0]?.status === "retrying", "the first failure, recorded retrying");
    expect(waiting.attempts).toHaveLength(1);

    // The process that ran the first attempt goes; the retries can only run in the one started now.
    await firstWorker.stop();
    await fixture.start("worker");

    const run = await waitFor(
      () => call(api.url, "GET", `/v1/runs/${waiting.id}`, { key: adminKey }).then((answer) => answer.body.data),
      (run) => run.status !== "retrying",
      "the run to end",
      60_000,
    );
    expect(run.status).toBe("success");
    expect(run.attempt).toBe(3);
    expect(run.attempts.map((tried: any) => [tried.attempt, tried.step_name, tried.msg, tried.will_retry])).toEqual([
      [1, "flaky", "flaky: try 1", true],
      [2, "flaky", "flaky: try 2", true],
    ]);
    expect(run.steps[1].$return_value).toEqual({ tries: 3, saw: "from the first process" });
    expect(await storeValue("first")).toBe(1);
    expect(await storeValue("flaky")).toBe(3);
  }, 120_000);
});
