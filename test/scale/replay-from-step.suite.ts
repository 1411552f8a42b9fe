import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterFixture, waitFor, type ClusterFixture } from "../helpers/test-cluster.js";
import { call } from "../helpers/server.js";
import type { ServerProcess } from "../../src/chaos/server-process.js";

/**
 * Replay from the failed step on the scale-out mode: an api process and
 * worker processes of the built binary (`node scripts/build.mjs` first) on
 * one PostgreSQL schema, the job queue on Redis. The run fails in one worker;
 * that worker is stopped, the workflow's code changes, and the replay (with
 * the failed run's code) runs in another worker: it starts at the failed
 * step from what the api copied into its delivery, runs the old version,
 * and the earlier step is not run again.
 */

const steps = (store: string, code: string) => [
  {
    name: "count",
    props: { store },
    code: `export default defineComponent({
      props: { store: { type: "data_store" } },
      async run({ $ }) {
        const runs = ((await this.store.get("count")) ?? 0) + 1;
        await this.store.set("count", runs);
        $.export("mark", "from the first worker");
        return { runs };
      },
    })`,
  },
  {
    name: "flagged",
    props: { store },
    code: `export default defineComponent({
      props: { store: { type: "data_store" } },
      async run({ steps }) {
        if (await this.store.get("broken")) throw new Error("the flag is set");
        return { code: ${JSON.stringify(code)}, saw: steps.count.mark };
      },
    })`,
  },
];

describe("replay from the failed step across processes (BullMQ on Redis)", () => {
  let fixture: ClusterFixture;
  let api: ServerProcess;
  let firstWorker: ServerProcess;
  let adminKey: string;

  beforeAll(async () => {
    fixture = await createClusterFixture("redis", "runnel_replay_step");
    const started = await fixture.start("api");
    api = started.server;
    adminKey = await fixture.adminKeyOf(started.dataDir);
    firstWorker = (await fixture.start("worker")).server;
  }, 180_000);
  afterAll(async () => {
    await fixture?.stop();
  }, 60_000);

  const store = "scale-replay";
  const setFlag = async (broken: boolean) => expect((await call(api.url, "PUT", `/v1/data_stores/${store}/records/broken`, { key: adminKey, json: { value: broken } })).status).toBe(200);

  it("runs the failed run's version from its failed step in another worker, without running the earlier step again", async () => {
    await setFlag(true);
    const created = await call(api.url, "POST", "/v1/workflows", { key: adminKey, json: { name: "Replay across processes", steps: steps(store, "v1") } });
    expect(created.status).toBe(200);
    const workflow = created.body.data;
    await call(api.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key: adminKey, json: { event: {} } });
    const errors = await waitFor(
      () => call(api.url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries`, { key: adminKey }).then((answer) => answer.body.data as any[]),
      (listed) => listed.length === 1,
      "the failed run's error",
    );

    await firstWorker.stop();
    await fixture.start("worker");
    expect((await call(api.url, "PUT", `/v1/workflows/${workflow.id}`, { key: adminKey, json: { steps: steps(store, "v2") } })).status).toBe(200);
    await setFlag(false);

    const accepted = await call(api.url, "POST", `/v1/workflows/${workflow.id}/$errors/${errors[0].id}/replay`, { key: adminKey, json: { from: "failed_step", with_code: "failed_run" } });
    expect(accepted.status).toBe(202);
    const runs = await waitFor(
      () => call(api.url, "GET", `/v1/workflows/${workflow.id}/runs`, { key: adminKey }).then((answer) => answer.body.data as any[]),
      (listed) => listed.some((run) => run.trigger.event_id === accepted.body.data.event_id),
      "the replay run",
      60_000,
    );
    const run = runs.find((listed) => listed.trigger.event_id === accepted.body.data.event_id);
    expect(run.status).toBe("success");
    expect(run.replay_of).toBe(errors[0].id);
    expect(run.workflow_version).toBe(1);
    expect(run.steps.map((step: any) => [step.name, step.reused])).toEqual([
      ["count", true],
      ["flagged", false],
    ]);
    expect(run.steps[1].$return_value).toEqual({ code: "v1", saw: "from the first worker" });
    expect((await call(api.url, "GET", `/v1/data_stores/${store}/records/count`, { key: adminKey })).body.data.value).toBe(1);
  }, 120_000);
});
