import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "bullmq";
import pino from "pino";
import { ServerProcess } from "../../src/chaos/server-process.js";
import { BullmqJobQueue } from "../../src/queue/bullmq/bullmq-job-queue.js";
import { SqliteDatabaseClass as Database } from "../../src/store/sqlite/sqlite-binding.js";
import { RUNNEL_VERSION } from "../../src/version.js";
import { runCliInProcess } from "../helpers/child.js";
import { parsePrometheusText, sampleValue } from "../helpers/prometheus-text.js";
import { freePort } from "../helpers/ports.js";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { obliterateQueues, uniqueNamespace } from "../queue/bullmq-fixture.js";

/** The process registry, GET /v1/status, `runnel status` and /readyz, on real servers. */

const status = async (server: TestServer) => {
  const answer = await call(server.url, "GET", "/v1/status", { key: server.adminKey });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { processes: any[]; queues: { deliveries: { waiting: number; running: number; oldest_wait_ms: number } } };
};

const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value).slice(0, 1500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe("one server (SQLite)", () => {
  let server: TestServer;
  beforeAll(async () => {
    // Lost after 3 s: a loaded machine delays a beat by far less.
    server = await startTestServer({ RUNNEL_HEARTBEAT_INTERVAL_MS: "500" });
  });
  afterAll(() => server.close());

  it("lists this process with its role, version, pid and a heartbeat that keeps fresh, and the queue", async () => {
    const first = await status(server);
    expect(first.processes).toEqual([
      expect.objectContaining({ instance_id: server.server.instanceId, role: "all", version: RUNNEL_VERSION, pid: process.pid, url: server.url, state: "live", self: true, heartbeat_interval_ms: 500, load: { busy_runners: 0, queued_deliveries: 0 } }),
    ]);
    expect(first.queues).toEqual({ deliveries: { waiting: 0, running: 0, oldest_wait_ms: 0 } });
    // It beats: two seconds later its heartbeat is newer than the first answer's, and younger than a few intervals.
    const firstBeat = first.processes[0].heartbeat_at;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const later = (await status(server)).processes[0];
    expect(later.heartbeat_at).toBeGreaterThan(firstBeat);
    expect(later.heartbeat_age_ms).toBeLessThan(2_500);
    expect(later.state).toBe("live");
  });

  it("is for admins: another user's key gets 403 naming what to use", async () => {
    const { key } = await createUser(server, "curious");
    const answer = await call(server.url, "GET", "/v1/status", { key });
    expect(answer.status).toBe(403);
    expect(answer.body.error.message).toMatch(/admin/);
  });

  it("`runnel status` prints the processes as a table and the queue in a line", async () => {
    const env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: server.adminKey, HOME: server.dataDir, XDG_CONFIG_HOME: server.dataDir };
    const result = await runCliInProcess(["status"], { env });
    expect(result.code, result.stderr).toBe(0);
    const row = result.stdout.split("\n").find((line) => line.includes("(this)"));
    expect(row).toBeDefined();
    expect(row).toContain(server.server.instanceId.slice(0, 8));
    expect(row).toMatch(/│ all\s+│ live\s+│/);
    expect(row).toContain(RUNNEL_VERSION);
    expect(row).toContain(String(process.pid));
    expect(result.stdout).toContain("deliveries: 0 waiting, 0 running\n");
    const json = await runCliInProcess(["status", "--json"], { env });
    expect(JSON.parse(json.stdout).processes[0].instance_id).toBe(server.server.instanceId);
  });

  it("describes /readyz and /v1/status in the OpenAPI document, with their answers' schemas", async () => {
    const { body } = await call(server.url, "GET", "/v1/openapi.json");
    const okSchema = (path: string) => body.paths[path].get.responses["200"].content["application/json"].schema;
    expect(Object.keys(okSchema("/readyz").properties).sort()).toEqual(["reason", "role", "status"]);
    expect(body.paths["/readyz"].get.responses["503"]).toBeDefined();
    expect(Object.keys(okSchema("/v1/status").properties).sort()).toEqual(["processes", "queues"]);
    expect(body.paths["/v1/status"].get.responses["403"]).toBeDefined();
    // /metrics exists only with RUNNEL_METRICS, so it is not described here.
    expect(body.paths["/metrics"]).toBeUndefined();
  });

  it("/readyz answers ready with the role, and needs no key", async () => {
    const answer = await call(server.url, "GET", "/readyz");
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: "ready", role: "all", reason: null });
  });
});

describe("/readyz on a graceful stop", () => {
  it("turns 503 while the server still serves (RUNNEL_SHUTDOWN_DRAIN_SECONDS), then the listener closes and the process leaves the registry", async () => {
    const server = await startTestServer({ RUNNEL_SHUTDOWN_DRAIN_SECONDS: "1" }, { keepData: true });
    try {
      expect((await call(server.url, "GET", "/readyz")).status).toBe(200);
      const closing = server.server.close();
      const ready = await call(server.url, "GET", "/readyz");
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: "unavailable", role: "all", reason: "shutting down" });
      // Liveness is another question: the process is alive and serving until the listener closes.
      expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
      await closing;
      await expect(fetch(`${server.url}/readyz`)).rejects.toThrow();
      const database = new Database(join(server.dataDir, "runnel.sqlite"), { readonly: true });
      try {
        expect(database.prepare("SELECT COUNT(*) AS count FROM processes").get()).toEqual({ count: 0 });
      } finally {
        database.close();
      }
    } finally {
      await server.close();
      await rm(server.dataDir, { recursive: true, force: true });
    }
  });
});

describe("processes sharing one PostgreSQL schema", () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let server: TestServer;
  let otherDir: string;
  let other: ServerProcess;

  beforeAll(async () => {
    schema = await createTestSchema("status");
    // This one beats slowly enough never to look lost on a loaded machine; the other fast, to be found lost soon.
    server = await startTestServer({ DATABASE_URL: schema.databaseUrl, RUNNEL_HEARTBEAT_INTERVAL_MS: "500", RUNNEL_METRICS: "admin" });
    otherDir = await mkdtemp(join(tmpdir(), "runnel-status-other-"));
    other = new ServerProcess({ dataDir: otherDir, port: await freePort(), env: { DATABASE_URL: schema.databaseUrl, RUNNEL_HEARTBEAT_INTERVAL_MS: "200", RUNNEL_LOG_LEVEL: "warn" } });
  });
  afterAll(async () => {
    await other?.kill();
    await server?.close();
    await schema?.drop();
    await rm(otherDir, { recursive: true, force: true });
  });

  it("is ready, and shows the queue's depth and oldest wait in /v1/status and /metrics", async () => {
    expect((await call(server.url, "GET", "/readyz")).body).toEqual({ status: "ready", role: "all", reason: null });
    // A delivery recorded 5 s ago that backs off for an hour: it waits, and nobody runs it during the test.
    const now = Date.now();
    await server.server.store.enqueueDeliveries([
      { listenerId: "p_waiting", emitterId: "dc_waiting", eventId: "1-0", ownerId: "u_nobody", subscriptionId: "sub_waiting", channel: "default", availableAt: now + 3_600_000, createdAt: now - 5_000, event: {}, indexedAtMs: now - 5_000 },
    ]);
    await expectOneWaitingFiveSeconds(server);
    await server.server.store.dropDeliveries([{ listenerId: "p_waiting", emitterId: "dc_waiting", eventId: "1-0" }]);
  });

  it("/readyz is 503 naming a migration the database lacks, and ready again once it is there", async () => {
    const row = (await schema.admin.query(`SELECT name, timestamp FROM ${schema.schema}.kysely_migration WHERE name = '0022-processes'`)).rows[0];
    expect(row).toBeDefined();
    await schema.admin.query(`DELETE FROM ${schema.schema}.kysely_migration WHERE name = '0022-processes'`);
    try {
      const answer = await call(server.url, "GET", "/readyz");
      expect(answer.status).toBe(503);
      expect(answer.body.reason).toMatch(/lacks migrations this release needs \(0022-processes\); restart/);
    } finally {
      await schema.admin.query(`INSERT INTO ${schema.schema}.kysely_migration (name, timestamp) VALUES ($1, $2)`, [row.name, row.timestamp]);
    }
    expect((await call(server.url, "GET", "/readyz")).status).toBe(200);
  });

  it("lists both; a killed one shows lost once its heartbeat ages; started again it is live; stopped cleanly it is gone", async () => {
    await other.start();
    // It answers /healthz as soon as it listens, and records itself just after.
    const both = await until(() => status(server), (answer) => answer.processes.length === 2, "the second process to record itself");
    expect(both.processes).toHaveLength(2);
    const self = both.processes.find((process) => process.self);
    const peer = both.processes.find((process) => !process.self);
    expect(self).toMatchObject({ instance_id: server.server.instanceId, state: "live", role: "all" });
    expect(peer).toMatchObject({ state: "live", role: "all", version: RUNNEL_VERSION, url: other.url, heartbeat_interval_ms: 200 });
    expect(peer.instance_id).not.toBe(self.instance_id);
    expect(peer.pid).not.toBe(process.pid);

    // SIGKILL: no goodbye. Its row stays, and shows lost after six missed beats (1.2 s here); this one stays live.
    await other.kill();
    const lost = await until(() => status(server), (answer) => answer.processes.find((process) => process.instance_id === peer.instance_id)?.state === "lost", "the killed process to show lost");
    expect(lost.processes.find((process) => process.self).state).toBe("live");
    expect(lost.processes.find((process) => !process.self).heartbeat_age_ms).toBeGreaterThan(1_200);
    const table = await runCliInProcess(["status"], { env: { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: server.adminKey, HOME: otherDir, XDG_CONFIG_HOME: otherDir } });
    expect(table.stdout).toMatch(/│ LOST\s+│/);
    expect(table.stderr).toMatch(/^Lost: .*no heartbeat/m);

    // Started again on its data folder, it takes its row back; SIGTERM takes it out.
    await other.start();
    await until(() => status(server), (answer) => answer.processes.length === 2 && answer.processes.every((process) => process.state === "live"), "the restarted process to be live");
    await other.stop();
    const alone = await status(server);
    expect(alone.processes.map((process) => process.instance_id)).toEqual([server.server.instanceId]);
  });
});

describe("a server whose jobs are in BullMQ (RUNNEL_QUEUE=redis)", () => {
  const redisUrl = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
  const namespace = uniqueNamespace("runnel_status");
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let server: TestServer;
  let producer: BullmqJobQueue;

  beforeAll(async () => {
    schema = await createTestSchema("status_bullmq");
    server = await startTestServer({ DATABASE_URL: schema.databaseUrl, RUNNEL_QUEUE: "redis", REDIS_URL: redisUrl, RUNNEL_QUEUE_NAMESPACE: namespace, RUNNEL_METRICS: "admin" });
    // Another process's view of the same queue: what it enqueues is in BullMQ, not in the store's rows.
    producer = await BullmqJobQueue.open({ target: { kind: "redis", url: redisUrl, namespace }, logger: pino({ level: "silent" }) });
  });
  afterAll(async () => {
    await producer?.close();
    await server?.close();
    await obliterateQueues((name) => new Queue(name, { connection: { url: redisUrl }, prefix: namespace }));
    await schema?.drop();
  });

  it("shows the jobs waiting in BullMQ, and the oldest one's wait, in /v1/status and /metrics", async () => {
    expect((await status(server)).queues).toEqual({ deliveries: { waiting: 0, running: 0, oldest_wait_ms: 0 } });
    // Recorded 5 s ago, backing off for an hour: it waits, and no worker runs it during the test.
    const now = Date.now();
    await producer.enqueue([
      { listenerId: "p_waiting", emitterId: "dc_waiting", eventId: "1-0", ownerId: "u_nobody", subscriptionId: "sub_waiting", channel: "default", availableAt: now + 3_600_000, createdAt: now - 5_000, event: {}, indexedAtMs: now - 5_000 },
    ]);
    await expectOneWaitingFiveSeconds(server);
  });
});

/** /v1/status and /metrics both show one delivery waiting, recorded at least 5 s ago, and none running. */
async function expectOneWaitingFiveSeconds(server: TestServer): Promise<void> {
  const { queues } = await status(server);
  expect(queues.deliveries.waiting).toBe(1);
  expect(queues.deliveries.running).toBe(0);
  expect(queues.deliveries.oldest_wait_ms).toBeGreaterThanOrEqual(5_000);
  const metrics = parsePrometheusText((await call(server.url, "GET", "/metrics", { key: server.adminKey })).body as string);
  expect(sampleValue(metrics, "runnel_delivery_queue_waiting")).toBe(1);
  expect(sampleValue(metrics, "runnel_delivery_queue_oldest_wait_seconds")).toBeGreaterThanOrEqual(5);
}
