import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerProcess } from "../../src/chaos/server-process.js";
import { runCli } from "../helpers/child.js";
import { clusterDeliveries, type ClusterDeliveries } from "../helpers/cluster-deliveries.js";
import { createTestSchema, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { createClusterFixture, REDIS_URL, waitFor } from "../helpers/test-cluster.js";
import { call } from "../helpers/server.js";
import { openStream } from "../helpers/sse.js";

/**
 * Roles across real processes: 1 api + 2 worker processes of the built
 * binary (`npm run build` first) on one PostgreSQL schema, with the job
 * queue on Redis, then on PostgreSQL alone.
 */



/** A timer source that emits its tick's timestamp every second: it runs on the workers only. */
const TICKER = `export default { name: "Ticker", version: "0.1.0", props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 1 } } }, async run(event) { this.$emit({ tick: event.timestamp }, { summary: "tick " + event.timestamp }); } };`;

/** An HTTP source that emits the body it is sent. */
const BIG_EMITTER = `export default { name: "Body emitter", version: "0.1.0", props: { http: "$.interface.http" }, async run(event) { this.$emit(event.body); } };`;

/** An HTTP workflow whose step answers the caller itself; `big` asks for a body larger than a NOTIFY can carry. */
const RESPONDER = {
  name: "Responder",
  trigger: { type: "http" },
  respond: "workflow",
  steps: [
    {
      name: "reply",
      code: `export default defineComponent({ async run({ steps, $ }) {
        const { n, big } = steps.trigger.event.body;
        await $.respond({ status: 201, headers: { "x-answered-by": "workflow" }, body: { n, doubled: n * 2, padding: big ? "x".repeat(20000) : "" } });
      } })`,
    },
  ],
};

/** An HTTP workflow the platform answers at once; its run takes a while, so a killed worker leaves some cut off. */
const SLOW_RUN = {
  name: "Slow runs",
  trigger: { type: "http" },
  steps: [{ name: "work", code: `export default defineComponent({ async run({ steps }) { await new Promise((resolve) => setTimeout(resolve, 300)); return steps.trigger.event.body.n; } })` }],
};

interface Cluster {
  api: ServerProcess;
  workers: ServerProcess[];
  schema: Awaited<ReturnType<typeof createTestSchema>>;
  /** Rows not yet relayed and BullMQ's jobs: where each delivery is, and who holds it. */
  deliveries: ClusterDeliveries;
  adminKey: string;
  stop(): Promise<void>;
}

async function startCluster(queue: "redis" | "postgres", prefix: string, env: Record<string, string> = {}): Promise<Cluster> {
  const fixture = await createClusterFixture(queue, prefix, { RUNNEL_HEARTBEAT_INTERVAL_MS: "500", ...env });
  // The api first: it makes the admin and its key; the workers find both in the database.
  const started = await (async () => {
    const api = await fixture.start("api");
    return { api, adminKey: await fixture.adminKeyOf(api.dataDir), workers: await Promise.all([fixture.start("worker"), fixture.start("worker")]) };
  })().catch(async (error: unknown) => {
    await fixture.stop().catch(() => undefined);
    throw error;
  });
  const { api, adminKey, workers } = started;
  const deliveries = clusterDeliveries(fixture.schema, fixture.target);
  return {
    deliveries,
    api: api.server,
    workers: workers.map((worker) => worker.server),
    schema: fixture.schema,
    adminKey,
    async stop() {
      await fixture.stop().finally(() => deliveries.close().catch(() => undefined));
    },
  };
}

async function deploy(url: string, key: string, path: string, body: unknown): Promise<any> {
  const answer = await call(url, "POST", path, { key, json: body });
  if (answer.status !== 200) throw new Error(`POST ${path} failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

const post = async (url: string, body: unknown) => {
  const started = performance.now();
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: answer.status, header: answer.headers.get("x-answered-by"), body: (await answer.json()) as any, ms: performance.now() - started };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The checks both queues must pass: events from workers reach an SSE stream on the api; `$.respond` comes back through the api. */
function describeAcrossProcesses(cluster: () => Cluster) {
  it("streams, on the api process, the events a timer source emits on the workers", async () => {
    const { api, adminKey } = cluster();
    const source = await deploy(api.url, adminKey, "/v1/sources", { component_code: TICKER, name: `ticker-${randomBytes(3).toString("hex")}`, configured_props: { timer: { intervalSeconds: 1 } } });
    const stream = await openStream(`${api.url}/v1/sources/${source.id}/sse`, adminKey);
    try {
      expect(stream.status).toBe(200);
      // The api runs no timers: a tick on the stream was emitted by a worker and crossed over the queue.
      const message = await stream.next((candidate) => candidate.data.includes('"tick"'), 20_000);
      expect(JSON.parse(message.data).event.tick).toEqual(expect.any(Number));
    } finally {
      await stream.close();
      await call(api.url, "DELETE", `/v1/sources/${source.id}`, { key: adminKey });
    }
  });

  it("streams an event larger than a PostgreSQL NOTIFY whole (read back from the store by its id)", async () => {
    const { api, adminKey } = cluster();
    const source = await deploy(api.url, adminKey, "/v1/sources", { component_code: BIG_EMITTER, name: `big-${randomBytes(3).toString("hex")}` });
    const stream = await openStream(`${api.url}/v1/sources/${source.id}/sse`, adminKey);
    try {
      const sent = await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 1, padding: "y".repeat(12_000) }) });
      expect(sent.status).toBe(200);
      const message = await stream.next((candidate) => candidate.data.includes('"padding"'), 20_000);
      expect(JSON.parse(message.data).event).toEqual({ n: 1, padding: "y".repeat(12_000) });
    } finally {
      await stream.close();
      await call(api.url, "DELETE", `/v1/sources/${source.id}`, { key: adminKey });
    }
  });

  it("runs a workflow's events through BullMQ: each event's delivery becomes a job (named by its run key), completed once, no row left behind", async () => {
    const { api, adminKey, deliveries, schema } = cluster();
    const workflow = await deploy(api.url, adminKey, "/v1/workflows", { ...SLOW_RUN, name: `through-bullmq-${randomBytes(3).toString("hex")}` });
    const completedBefore = await deliveries.completedJobs();
    const sent = 12;
    const answers = await Promise.all(Array.from({ length: sent }, (_, n) => post(workflow.trigger.endpoint_url, { n })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(sent).fill(200));
    const runs = await waitFor(
      async () => (await call(api.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key: adminKey })).body.data as any[],
      (list) => list.length >= sent && list.every((run) => run.status === "success"),
      `${sent} finished runs`,
    );
    // Each event ran once, by its run key.
    expect(new Set(runs.map((run) => `${run.trigger.emitter_id}/${run.trigger.event_id}`)).size).toBe(sent);
    expect(runs).toHaveLength(sent);
    await waitFor(() => deliveries.unfinished(workflow.id), (left) => left === 0, "no delivery of the workflow left, in the store or the queue");
    // Relayed: the store's rows went to BullMQ, which completed one job per run (and one only: the job id is the run key).
    expect((await schema.admin.query(`SELECT COUNT(*) AS n FROM ${schema.schema}.deliveries WHERE listener_id = $1`, [workflow.id])).rows[0].n).toBe("0");
    expect(await deliveries.completedJobs()).toBe(completedBefore + sent);
    await call(api.url, "DELETE", `/v1/workflows/${workflow.id}`, { key: adminKey });
  });

  it("answers an HTTP caller of the api with the $.respond of the run on a worker, well under the workers' 1 s poll", async () => {
    const { api, adminKey } = cluster();
    const workflow = await deploy(api.url, adminKey, "/v1/workflows", RESPONDER);
    const endpoint = workflow.trigger.endpoint_url as string;
    expect(endpoint.startsWith(api.url)).toBe(true);
    // The first run starts a runner; the ones after are what is measured.
    expect(await post(endpoint, { n: 0 })).toMatchObject({ status: 201, header: "workflow", body: { n: 0, doubled: 0 } });
    const timings: number[] = [];
    for (let n = 1; n <= 7; n += 1) {
      const answer = await post(endpoint, { n });
      expect(answer).toMatchObject({ status: 201, header: "workflow", body: { n, doubled: n * 2, padding: "" } });
      timings.push(answer.ms);
    }
    // Polling alone would take 500 ms on average (0-1000): the wake-up and the published answer take a few ms each.
    expect(median(timings), JSON.stringify(timings)).toBeLessThan(400);
    // An answer larger than a PostgreSQL NOTIFY (8000 bytes) arrives whole (it travels in pieces).
    const big = await post(endpoint, { n: 21, big: true });
    expect(big.status).toBe(201);
    expect(big.body.padding).toHaveLength(20_000);
    expect(big.body.doubled).toBe(42);
  });
}

describe("1 api + 2 workers, queue on Redis", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    // A short lease: a killed worker's runs are taken over within the test (the default is 30 s).
    cluster = await startCluster("redis", "roles_redis", { RUNNEL_DELIVERY_LEASE_SECONDS: "5" });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it("records each process with its real role; a worker serves only /healthz, /readyz and /metrics, and is ready once its queue and store answer", async () => {
    const { api, workers, adminKey } = cluster;
    const status = await waitFor(
      () => call(api.url, "GET", "/v1/status", { key: adminKey }),
      (answer) => answer.body.processes?.length === 3,
      "three processes in the registry",
    );
    expect(status.body.processes.map((process: any) => process.role).sort()).toEqual(["api", "worker", "worker"]);
    expect((await call(api.url, "GET", "/readyz")).body).toEqual({ status: "ready", role: "api", reason: null });
    const worker = workers[0]!;
    expect((await call(worker.url, "GET", "/readyz")).body).toEqual({ status: "ready", role: "worker", reason: null });
    expect((await call(worker.url, "GET", "/healthz")).status).toBe(200);
    const refused = await call(worker.url, "GET", "/v1/sources", { key: adminKey });
    expect(refused.status).toBe(404);
    expect(refused.body.error.message).toMatch(/worker .* Send GET \/v1\/sources to an api process/);
  });

  describeAcrossProcesses(() => cluster);

  it("ticks a timer once per interval across the two workers", async () => {
    const { api, adminKey } = cluster;
    const source = await deploy(api.url, adminKey, "/v1/sources", { component_code: TICKER, name: "once-per-tick", configured_props: { timer: { intervalSeconds: 1 } } });
    const events = await waitFor(
      async () => (await call(api.url, "GET", `/v1/sources/${source.id}/event_summaries?expand=event&limit=100`, { key: adminKey })).body.data as any[],
      (list) => list.length >= 6,
      "six ticks",
    );
    await call(api.url, "DELETE", `/v1/sources/${source.id}`, { key: adminKey });
    const ticks = events.map((event) => event.event.tick as number);
    // Each due time (a second) once: two workers never both ran one.
    expect(new Set(ticks).size, JSON.stringify(ticks)).toBe(ticks.length);
    // None lost either: one second apart (a tick run late on a loaded machine may skip the one it overran, no more).
    const sorted = [...ticks].sort((a, b) => a - b);
    const gaps = sorted.slice(1).map((tick, index) => tick - sorted[index]!);
    expect(Math.max(...gaps), JSON.stringify(sorted)).toBeLessThanOrEqual(2);
  }, 60_000);

  it("runs every accepted HTTP event exactly once (by its run key) when a worker is SIGKILLed holding runs: the other takes them over", async () => {
    const { api, workers, adminKey, deliveries } = cluster;
    const status = await call(api.url, "GET", "/v1/status", { key: adminKey });
    const victim = workers[0]!;
    const victimId = status.body.processes.find((process: any) => process.url === victim.url).instance_id as string;
    const workflow = await deploy(api.url, adminKey, "/v1/workflows", SLOW_RUN);
    const endpoint = workflow.trigger.endpoint_url as string;
    const heldByVictim = async () => [...(await deliveries.heldBy(victimId)).values()].reduce((sum, n) => sum + n, 0);
    let accepted = 0;
    let sending = true;
    const load = (async () => {
      for (let n = 0; sending || n < 40; n += 4) {
        const answers = await Promise.all([0, 1, 2, 3].map((offset) => fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: n + offset }) })));
        for (const answer of answers) {
          await answer.text();
          if (answer.status === 200) accepted += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    // Killed while it holds runs it has not finished: their leases stay behind it.
    const held = await waitFor(heldByVictim, (count) => count > 0, "the victim holding runs", 20_000);
    await victim.kill();
    const left = await heldByVictim();
    sending = false;
    await load;
    expect(held).toBeGreaterThan(0);
    // The other worker takes them over once their lease (RUNNEL_DELIVERY_LEASE_SECONDS=5) runs out; nobody restarts the victim.
    const runs = await waitFor(
      async () => (await call(api.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=200`, { key: adminKey })).body.data as any[],
      (list) => list.length >= accepted && list.every((run) => run.status === "success"),
      `${accepted} finished runs`,
      60_000,
    );
    expect(await heldByVictim()).toBe(0);
    // Give a run done twice the time to show up, then count again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const final = (await call(api.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=200`, { key: adminKey })).body.data as any[];
    expect(final).toHaveLength(runs.length);
    const runKeys = final.map((run) => `${run.trigger.emitter_id}/${run.trigger.event_id}`);
    expect(new Set(runKeys).size, `${left} left held by the killed worker`).toBe(accepted);
    expect(final).toHaveLength(accepted);
    // Each accepted event is a stored event of the trigger source, and each has its one run.
    const events = (await call(api.url, "GET", `/v1/sources/${final[0].trigger.emitter_id}/event_summaries?limit=200`, { key: adminKey })).body.data as any[];
    expect(events).toHaveLength(accepted);
    expect(new Set(events.map((event) => event.id))).toEqual(new Set(final.map((run) => run.trigger.event_id)));
  }, 180_000);
});

describe("1 api + 2 workers, PostgreSQL alone", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster("postgres", "roles_pg");
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  describeAcrossProcesses(() => cluster);
});

describe("start-up refuses a role without what it needs, naming it", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "runnel-roles-bad-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("role api without RUNNEL_QUEUE", async () => {
    const result = await runCli(["server", "--role", "api"], { env: { RUNNEL_DATA_DIR: dataDir, DATABASE_URL: TEST_DATABASE_URL, RUNNEL_PORT: "0" }, cwd: dataDir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Runnel cannot start: RUNNEL_QUEUE: is not set, but --role is "api": .*RUNNEL_QUEUE=redis/);
  });

  it("role worker (RUNNEL_ROLE) without DATABASE_URL", async () => {
    const result = await runCli(["server"], { env: { RUNNEL_DATA_DIR: dataDir, RUNNEL_ROLE: "worker", RUNNEL_QUEUE: "redis", REDIS_URL, RUNNEL_PORT: "0" }, cwd: dataDir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Runnel cannot start: DATABASE_URL: is not set/);
  });

  it("an unknown role", async () => {
    const result = await runCli(["server"], { env: { RUNNEL_DATA_DIR: dataDir, RUNNEL_ROLE: "both", RUNNEL_PORT: "0" }, cwd: dataDir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/RUNNEL_ROLE: expected one of all, api, worker, got "both"/);
  });
});
