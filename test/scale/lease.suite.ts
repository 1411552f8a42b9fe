import type { Job, Queue } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerProcess } from "../../src/chaos/server-process.js";
import { openBullmqBackend, type BullmqBackend } from "../../src/queue/bullmq/bullmq-backend.js";
import { clusterDeliveries, type ClusterDeliveries } from "../helpers/cluster-deliveries.js";
import { call } from "../helpers/server.js";
import { createClusterFixture, waitFor, type ClusterFixture, type QueueKind } from "../helpers/test-cluster.js";

/**
 * Leases across real processes (the built binary; `npm run build` first):
 * a worker renews the claims it holds, so a run longer than its lease is
 * not started again elsewhere; and a worker killed and started again on its
 * data folder takes back at once the jobs BullMQ still shows held by it.
 */

/** An HTTP workflow the platform answers at once, whose run sleeps `ms`. */
const sleeper = (name: string, ms: number) => ({
  name,
  trigger: { type: "http" },
  steps: [{ name: "work", code: `export default defineComponent({ async run({ steps }) { await new Promise((resolve) => setTimeout(resolve, ${ms})); return steps.trigger.event.body.n; } })` }],
});

interface Installation {
  fixture: ClusterFixture;
  api: ServerProcess;
  workers: ServerProcess[];
  adminKey: string;
  deliveries: ClusterDeliveries;
  /** BullMQ's queue of deliveries, read from outside: who holds a job, how often it was started. */
  jobs: Queue;
  stop(): Promise<void>;
}

async function install(queue: QueueKind, prefix: string, workers: number, env: Record<string, string>): Promise<Installation> {
  const fixture = await createClusterFixture(queue, prefix, { RUNNEL_HEARTBEAT_INTERVAL_MS: "500", ...env });
  try {
    const api = await fixture.start("api");
    const adminKey = await fixture.adminKeyOf(api.dataDir);
    const started = await Promise.all(Array.from({ length: workers }, () => fixture.start("worker")));
    const deliveries = clusterDeliveries(fixture.schema, fixture.target);
    const backend: BullmqBackend = openBullmqBackend(fixture.target, pino({ level: "silent" }));
    const jobs = backend.queue("deliveries");
    return {
      fixture,
      api: api.server,
      workers: started.map((worker) => worker.server),
      adminKey,
      deliveries,
      jobs,
      async stop() {
        await fixture.stop().finally(async () => {
          await deliveries.close().catch(() => undefined);
          await jobs.close().catch(() => undefined);
          await backend.close().catch(() => undefined);
        });
      },
    };
  } catch (error) {
    await fixture.stop().catch(() => undefined);
    throw error;
  }
}

async function deployWorkflow(installation: Installation, body: unknown): Promise<{ id: string; endpoint: string }> {
  const answer = await call(installation.api.url, "POST", "/v1/workflows", { key: installation.adminKey, json: body });
  if (answer.status !== 200) throw new Error(`POST /v1/workflows failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { id: answer.body.data.id, endpoint: answer.body.data.trigger.endpoint_url };
}

async function instanceIdOf(installation: Installation, server: ServerProcess): Promise<string> {
  const status = await waitFor(
    () => call(installation.api.url, "GET", "/v1/status", { key: installation.adminKey }),
    (answer) => (answer.body.processes ?? []).some((process: any) => process.url === server.url),
    "the worker in the registry",
  );
  return status.body.processes.find((process: any) => process.url === server.url).instance_id;
}

const runsOf = async (installation: Installation, workflowId: string) =>
  (await call(installation.api.url, "GET", `/v1/workflows/${workflowId}/runs?limit=200`, { key: installation.adminKey })).body.data as any[];

const post = async (endpoint: string, body: unknown) => {
  const answer = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await answer.text();
  return answer.status;
};

describe("a run longer than its lease, on a live worker (Redis)", () => {
  let installation: Installation;
  beforeAll(async () => {
    // The shortest lease: a run of 13 s outlives it more than twice.
    installation = await install("redis", "lease_renew", 2, { RUNNEL_DELIVERY_LEASE_SECONDS: "5" });
  }, 180_000);
  afterAll(async () => {
    await installation?.stop();
  }, 60_000);

  it("stays with the worker that claimed it, which renews its lease, and is started once", async () => {
    const workflow = await deployWorkflow(installation, sleeper("Long run", 13_000));
    const ids = await Promise.all(installation.workers.map((worker) => instanceIdOf(installation, worker)));
    expect(await post(workflow.endpoint, { n: 1 })).toBe(200);
    const holdersNow = async () => {
      const holders: string[] = [];
      for (const id of ids) if ((await installation.deliveries.heldBy(id)).get(workflow.id)) holders.push(id);
      return holders;
    };
    const [holder] = await waitFor(holdersNow, (holders) => holders.length === 1, "a worker holding the run", 20_000);
    // Until its run is recorded, nobody else ever holds it, however many leases go by.
    let samples = 0;
    for (;;) {
      const runs = await runsOf(installation, workflow.id);
      if (runs.length > 0 && runs.every((run) => run.status !== "running")) break;
      const holders = await holdersNow();
      expect(holders.every((id) => id === holder), JSON.stringify(holders)).toBe(true);
      samples += 1;
      if (samples > 200) throw new Error("the run did not finish");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const runs = await runsOf(installation, workflow.id);
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe("success");
    // BullMQ's own count: the job was started once, never found stalled (taken over).
    const completed = (await installation.jobs.getJobs(["completed"], 0, -1)) as Array<Job | undefined>;
    const job = completed.find((entry) => entry?.data.listenerId === workflow.id);
    expect(job).toBeDefined();
    expect(job!.attemptsStarted).toBe(1);
    expect(job!.stalledCounter).toBe(0);
  }, 120_000);
});

for (const queue of ["redis", "postgres"] as const) {
  describe(`a worker killed and started again on its data folder (${queue === "redis" ? "Redis" : "PostgreSQL alone"})`, () => {
    let installation: Installation;
    beforeAll(async () => {
      // A lease of ten minutes: within the test, only a take-back at start gives the killed worker's runs back.
      installation = await install(queue, `lease_back_${queue === "redis" ? "r" : "p"}`, 1, { RUNNEL_DELIVERY_LEASE_SECONDS: "600" });
    }, 180_000);
    afterAll(async () => {
      await installation?.stop();
    }, 60_000);

    // Rows its relay held (killed between a claim and its delete) come back with the relay's own lease (30 s at most).
    it("takes back at once the runs it held, and each event runs once", async () => {
      const [worker] = installation.workers as [ServerProcess];
      const workerId = await instanceIdOf(installation, worker);
      const workflow = await deployWorkflow(installation, sleeper("Slow runs", 2_000));
      const statuses = await Promise.all(Array.from({ length: 6 }, (_, n) => post(workflow.endpoint, { n })));
      expect(statuses).toEqual(Array(6).fill(200));
      const jobsOf = async (processedBy: string | null) =>
        ((await installation.jobs.getJobs(["active"], 0, -1)) as Array<Job | undefined>).filter(
          (job) => job?.data.listenerId === workflow.id && (processedBy === null || job.processedBy === processedBy),
        ).length;
      await waitFor(() => jobsOf(workerId), (count) => count > 0, "the worker holding jobs", 20_000);
      // SIGKILL mid-run: its jobs stay held by it in BullMQ, their leases ten minutes long.
      await worker.kill();
      expect(await jobsOf(workerId)).toBeGreaterThan(0);
      await worker.start();
      const runs = await waitFor(
        () => runsOf(installation, workflow.id),
        (list) => list.length >= 6 && list.every((run) => run.status === "success"),
        "six finished runs",
        90_000,
      );
      // Each job is completed just after its run is recorded: none stays active. (Rows its relay held when it was
      // killed, already relayed or not, stay leased to it until the relay's own lease ends: 30 s at most.)
      await waitFor(() => jobsOf(null), (count) => count === 0, "no job of the workflow left active", 10_000);
      const runKeys = runs.map((run) => `${run.trigger.emitter_id}/${run.trigger.event_id}`);
      expect(new Set(runKeys).size).toBe(6);
      expect(runs).toHaveLength(6);
    }, 180_000);
  });
}
