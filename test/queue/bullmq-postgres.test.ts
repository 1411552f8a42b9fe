import { createPostgresBackend, withBackend } from "bullmq";
import pg from "pg";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { postgresReadyJobs } from "../../src/queue/bullmq/ready-jobs.js";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describeJobQueueConformance, type QueueFixture } from "./conformance.js";
import { describeTickCatchUp } from "./tick-catch-up.js";
import { bullmqFixture, obliterateQueues, uniqueNamespace } from "./bullmq-fixture.js";

// PostgreSQL alone (RUNNEL_QUEUE=postgres): BullMQ 6's PostgreSQL backend, live messages over LISTEN/NOTIFY.
const { Queue } = withBackend(createPostgresBackend);
let admin: pg.Client;
const schemas: string[] = [];

beforeAll(async () => {
  await requirePostgres();
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
});

afterAll(async () => {
  for (const schema of schemas) {
    const left = await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    expect(left.rowCount).toBe(0);
  }
  await admin.end();
});

const makeFixture = async () => {
  const schema = uniqueNamespace("runnel_queue_test");
  schemas.push(schema);
  return bullmqFixture({ kind: "postgres", url: TEST_DATABASE_URL, namespace: schema }, async () => {
    await obliterateQueues((name) => new Queue(name, { connection: { connectionString: TEST_DATABASE_URL, schema } }) as never);
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  });
};
describeJobQueueConformance("BullMQ on PostgreSQL alone", makeFixture);
describeTickCatchUp("BullMQ on PostgreSQL alone", makeFixture);

it("names DATABASE_URL when PostgreSQL cannot be reached", async () => {
  const { BullmqJobQueue } = await import("../../src/queue/bullmq/bullmq-job-queue.js");
  const pino = (await import("pino")).default;
  await expect(
    BullmqJobQueue.open({ target: { kind: "postgres", url: "postgres://postgres@127.0.0.1:1/none" }, logger: pino({ level: "silent" }), connectTimeoutMs: 1_500 }),
  ).rejects.toThrow(/PostgreSQL at DATABASE_URL/);
}, 30_000);

describe("a claim on PostgreSQL alone asks how many jobs are ready before each wave after the first", () => {
  const opened: Array<{ close(): Promise<unknown> }> = [];
  let fixture: QueueFixture;

  beforeEach(async () => {
    fixture = await makeFixture();
  });

  afterEach(async () => {
    for (const closable of opened.splice(0)) await closable.close().catch(() => undefined);
    await fixture.dispose();
  });

  /** BullMQ's claim calls (each a `move_to_active`, and a "no job" signal when it finds nothing), counted. */
  const countingClaims = async () => {
    const queue = await fixture.open({ leaseMs: 60_000 });
    opened.push(queue);
    const claimer = (queue as unknown as { claimer: { getNextJob(...args: unknown[]): Promise<unknown> } }).claimer;
    const calls = vi.spyOn(claimer, "getNextJob");
    return { queue, calls };
  };

  it("takes a job alone in the queue with one call, none that finds nothing", async () => {
    const { queue, calls } = await countingClaims();
    await queue.enqueue([fixture.delivery("1000-0")]);
    expect((await queue.claim(64)).map((job) => job.eventId)).toEqual(["1000-0"]);
    expect(calls).toHaveBeenCalledTimes(1);
  });

  it("takes every ready job, in as many calls as there are jobs", async () => {
    const { queue, calls } = await countingClaims();
    const deliveries = Array.from({ length: 11 }, (_, index) => fixture.delivery(`1000-${index}`));
    await queue.enqueue(deliveries);
    const claimed = await queue.claim(64);
    expect(claimed.map((job) => job.eventId).sort()).toEqual(deliveries.map((delivery) => delivery.eventId).sort());
    expect(calls).toHaveBeenCalledTimes(11);
    // Within the claim's limit: the rest stays for the next claim.
    await queue.enqueue([fixture.delivery("2000-0"), fixture.delivery("2000-1"), fixture.delivery("2000-2")]);
    calls.mockClear();
    expect(await queue.claim(2)).toHaveLength(2);
    expect(calls).toHaveBeenCalledTimes(2);
    expect(await queue.claim(2)).toHaveLength(1);
  });
});

it("counts a queue's ready jobs for a claim: waiting ones, and delayed ones whose time has come, up to the limit asked", async () => {
  const schema = uniqueNamespace("runnel_ready_jobs_test");
  schemas.push(schema);
  const queue = new Queue("deliveries", { connection: { connectionString: TEST_DATABASE_URL, schema, migrate: true } });
  const ready = postgresReadyJobs(TEST_DATABASE_URL, schema, pino({ level: "silent" }));
  try {
    await queue.add("job", {}, { jobId: "in-an-hour", delay: 3_600_000 });
    await queue.add("job", {}, { jobId: "in-a-minute", delay: 60_000 });
    expect(await ready.count("deliveries", Date.now(), 8)).toBe(0);
    await queue.add("job", {}, { jobId: "now-1" });
    await queue.add("job", {}, { jobId: "now-2" });
    expect(await ready.count("deliveries", Date.now(), 8)).toBe(2);
    // Two minutes on, the job due in a minute is still "delayed" in BullMQ's table (only a claim promotes it), and counted.
    const later = Date.now() + 120_000;
    expect(await ready.count("deliveries", later, 8)).toBe(3);
    expect(await ready.count("deliveries", later, 2)).toBe(2);
    expect(await ready.count("another-queue", later, 8)).toBe(0);
  } finally {
    await ready.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  }
});

describe("on PostgreSQL alone, the queue tells every process of jobs queued, from BullMQ's own NOTIFY", () => {
  let fixture: QueueFixture;
  const opened: Array<{ close(): Promise<unknown> }> = [];

  beforeEach(async () => {
    fixture = await makeFixture();
  });
  afterEach(async () => {
    for (const closable of opened.splice(0)) await closable.close().catch(() => undefined);
    await fixture.dispose();
  });

  it("hears another process's add, delayed add and promotion, and not the jobs of another queue", async () => {
    const producer = await fixture.open({ leaseMs: 60_000 });
    const consumer = await fixture.open({ leaseMs: 60_000 });
    opened.push(producer, consumer);
    let heard = 0;
    expect(consumer.onQueuedJobs).not.toBeNull();
    const stop = await consumer.onQueuedJobs!(() => (heard += 1));
    const heardTimes = async (count: number) => {
      const deadline = Date.now() + 5_000;
      while (heard < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(heard).toBe(count);
    };
    await producer.enqueue([fixture.delivery("1000-0")]);
    await heardTimes(1);
    const later = fixture.delivery("1000-1", Date.now() + 60_000);
    await producer.enqueue([later]);
    await heardTimes(2);
    expect(await producer.hurry([later])).toBe(1);
    await heardTimes(3);
    // A timer's schedule queues a job in the queue of timer ticks: not a delivery to claim.
    await producer.scheduleTimer(await fixture.timer({ intervalSeconds: 60, cron: null }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).toBe(3);
    // Both deliveries are claimable, as heard.
    expect((await consumer.claim(8)).map((job) => job.eventId).sort()).toEqual(["1000-0", "1000-1"]);
    await stop();
    await producer.enqueue([fixture.delivery("1000-2")]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).toBe(3);
  });
});
