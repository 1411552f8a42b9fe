import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeJobQueueConformance } from "./conformance.js";
import { describeTickCatchUp } from "./tick-catch-up.js";
import { bullmqFixture, obliterateQueues, uniqueNamespace } from "./bullmq-fixture.js";

const REDIS_URL = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
let redis: Redis;
const namespaces: string[] = [];

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  // Fails the file, loudly, without Redis: the adapter is half of the scale-out.
  await redis.connect().catch((error: Error) => {
    throw new Error(`Redis is not reachable at ${REDIS_URL} (${error.message}). Start it (redis-server) or point RUNNEL_TEST_REDIS_URL at one.`);
  });
});

afterAll(async () => {
  // Every test's namespace is gone: obliterate removed all it made.
  for (const prefix of namespaces) expect(await redis.keys(`${prefix}:*`)).toEqual([]);
  await redis.quit();
});

const makeFixture = async () => {
  const prefix = uniqueNamespace("runnel-test");
  namespaces.push(prefix);
  return bullmqFixture({ kind: "redis", url: REDIS_URL, namespace: prefix }, () =>
    obliterateQueues((name) => new Queue(name, { connection: { url: REDIS_URL }, prefix })),
  );
};
describeJobQueueConformance("BullMQ on Redis", makeFixture);
describeTickCatchUp("BullMQ on Redis", makeFixture);

it("names REDIS_URL when Redis cannot be reached", async () => {
  const { BullmqJobQueue } = await import("../../src/queue/bullmq/bullmq-job-queue.js");
  const pino = (await import("pino")).default;
  await expect(
    BullmqJobQueue.open({ target: { kind: "redis", url: "redis://127.0.0.1:1" }, logger: pino({ level: "silent" }), connectTimeoutMs: 1_500 }),
  ).rejects.toThrow(/Redis at REDIS_URL/);
}, 30_000);
