import { createPostgresBackend, Queue, withBackend } from "bullmq";
import pg from "pg";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { EventHub } from "../../src/engine/event-hub.js";
import { nextTickAfter } from "../../src/engine/sources/timer-schedule.js";
import type { JobQueue } from "../../src/queue/job-queue.js";
import { openJobQueue } from "../../src/queue/open-job-queue.js";
import type { Store } from "../../src/store/store.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { uniqueNamespace } from "./bullmq-fixture.js";

const REDIS_URL = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const context = { cwd: "/srv", stdoutIsTty: false };
// The local adapter only keeps the store to call it; these tests never reach it.
const unusedStore = {} as Store;
const base = { store: unusedStore, hub: new EventHub(), nextTickAfter, logger: pino({ level: "silent" }) };

describe("openJobQueue: the adapter RUNNEL_QUEUE names", () => {
  const cleanUps: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0)) await cleanUp();
  });
  const opened = (queue: JobQueue, cleanUp: () => Promise<void>) => {
    cleanUps.push(async () => {
      await queue.close();
      await cleanUp();
    });
    return queue;
  };

  it("is the store's own by default", async () => {
    const queue = await openJobQueue(loadConfig({}, {}, context), base);
    expect(queue.kind).toBe("local");
    await queue.close();
  });

  it("is BullMQ on REDIS_URL for redis, and it works", async () => {
    const prefix = uniqueNamespace("runnel-test");
    const config = loadConfig({ RUNNEL_QUEUE: "redis", REDIS_URL, DATABASE_URL: TEST_DATABASE_URL }, {}, context);
    const queue = opened(await openJobQueue(config, { ...base, namespace: prefix }), async () => {
      for (const name of ["deliveries", "timer-ticks"]) {
        const admin = new Queue(name, { connection: { url: REDIS_URL }, prefix });
        await admin.obliterate({ force: true });
        await admin.close();
      }
    });
    expect(queue.kind).toBe("redis");
    expect(await queue.claim(1)).toEqual([]);
  });

  it("is BullMQ on DATABASE_URL alone for postgres, and it works", async () => {
    const schema = uniqueNamespace("runnel_queue_test");
    const config = loadConfig({ RUNNEL_QUEUE: "postgres", DATABASE_URL: TEST_DATABASE_URL }, {}, context);
    const queue = opened(await openJobQueue(config, { ...base, namespace: schema }), async () => {
      const { Queue: PostgresQueue } = withBackend(createPostgresBackend);
      for (const name of ["deliveries", "timer-ticks"]) {
        const admin = new PostgresQueue(name, { connection: { connectionString: TEST_DATABASE_URL, schema } });
        await admin.obliterate({ force: true });
        await admin.close();
      }
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await client.end();
    });
    expect(queue.kind).toBe("postgres");
    expect(await queue.claim(1)).toEqual([]);
  });
});
