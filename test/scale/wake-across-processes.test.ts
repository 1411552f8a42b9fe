import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisLiveChannel } from "../../src/queue/bullmq/redis-live-channel.js";
import { WakeAcrossProcesses } from "../../src/engine/wake-across-processes.js";

/** Wake-ups between two "processes" (two live channels on one Redis): what an api process tells the workers. */
const REDIS_URL = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const logger = pino({ level: "silent" });

describe("wake-ups across processes over Redis", () => {
  const wire = `wake-test-${randomBytes(4).toString("hex")}:live`;
  let apiConnection: Redis;
  let workerConnection: Redis;
  let api: WakeAcrossProcesses;
  let worker: WakeAcrossProcesses;
  let apiChannel: RedisLiveChannel;
  let workerChannel: RedisLiveChannel;

  beforeAll(async () => {
    apiConnection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    workerConnection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    apiChannel = new RedisLiveChannel(apiConnection, wire, logger);
    workerChannel = new RedisLiveChannel(workerConnection, wire, logger);
    api = new WakeAcrossProcesses(apiChannel, logger);
    worker = new WakeAcrossProcesses(workerChannel, logger);
  });
  afterAll(async () => {
    await apiChannel?.close();
    await workerChannel?.close();
    await apiConnection?.quit();
    await workerConnection?.quit();
  });

  it("wakes the other process's worker for each topic, and a burst of appends costs a few messages, not one each", async () => {
    const heard = { deliveries: 0, timers: 0 };
    const stop = await worker.listen({ deliveries: () => (heard.deliveries += 1), timers: () => (heard.timers += 1) });
    try {
      for (let i = 0; i < 1_000; i += 1) api.announce("deliveries");
      api.announce("timers");
      const until = Date.now() + 5_000;
      while ((heard.deliveries < 2 || heard.timers < 1) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The first goes at once; the 999 that came while it was on its way make one more after it.
      expect(heard).toEqual({ deliveries: 2, timers: 1 });
      // Later news wakes again.
      api.announce("deliveries");
      const again = Date.now() + 5_000;
      while (heard.deliveries < 3 && Date.now() < again) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(heard.deliveries).toBe(3);
    } finally {
      await stop();
    }
  });
});
