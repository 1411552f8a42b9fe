import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { modes, REDIS_URL, serverOnMode } from "../workflows/modes.js";
import { deploySource, eventsOf, eventually, logsOf } from "../helpers/sources.js";

/**
 * A timer tick on the shared queue (BullMQ on Redis) runs once by its due
 * time, as a delivery runs once by its run key: its due time is recorded
 * with its events (timer_tick_runs). The same due time handed out twice
 * (two jobs, as a scheduler's own tick and a late tick's catch-up could be)
 * runs the code twice but appends its events once; a tick taken over from
 * a worker that died after recording it (BullMQ's second start of the job)
 * is not run at all. The jobs are put on the server's own tick queue here,
 * as the scheduler would, with due times of the test's choosing.
 */
const TICKER = `module.exports = {
  name: "Ticker", version: "1",
  props: { timer: { type: "$.interface.timer", default: { intervalSeconds: 3600 } } },
  async run(event) { console.log("ran " + event.timestamp); this.$emit({ tick: event.timestamp }); },
};`;

const redisMode = modes("timer_once").find((mode) => mode.name === "PostgreSQL, BullMQ on Redis")!;

describe("a timer tick on the shared queue", () => {
  const setup = serverOnMode(redisMode, "ticker");

  it("appends the events of a due time once, whether it comes twice or is taken over from a worker that died", async () => {
    const { server, key, userId } = setup;
    const namespace = setup.env.RUNNEL_QUEUE_NAMESPACE!;
    const source = await deploySource(server, key, { component_code: TICKER, name: "hourly" });
    const ticks = new Queue("timer-ticks", { connection: { url: REDIS_URL }, prefix: namespace });
    const redis = new Redis(REDIS_URL);
    try {
      const dueAt = Math.floor(Date.now() / 1000) * 1000 - 60_000;
      const data = { sourceId: source.id, ownerId: userId };
      const ran = async () => (await logsOf(server, key, source.id)).filter((line) => line.includes(`ran ${dueAt / 1000}`)).length;
      const ofDueTime = async () => (await eventsOf(server, key, source.id)).filter((event) => event.event.tick === dueAt / 1000);

      // The due time's first run: its event.
      await ticks.add("tick", data, { jobId: `first:${source.id}:${dueAt}` });
      await eventually(async () => ((await ran()) === 1 ? true : undefined), 15_000, "the tick's first run");
      expect(await ofDueTime()).toHaveLength(1);

      // The same due time again, as a job of its own: the code runs, nothing more is appended.
      await ticks.add("tick", data, { jobId: `twice:${source.id}:${dueAt}` });
      await eventually(async () => ((await ran()) === 2 ? true : undefined), 15_000, "the tick's second run");
      expect(await ofDueTime()).toHaveLength(1);

      // Taken over from a worker that died holding it (BullMQ counts a second start of the job): not run.
      const takenOverId = `again:${source.id}:${dueAt}`;
      await ticks.add("tick", data, { jobId: takenOverId, delay: 1_000 });
      await redis.hset(`${namespace}:timer-ticks:${takenOverId}`, "ats", 1);
      await eventually(async () => ((await ticks.getJobState(takenOverId)) === "completed" ? true : undefined), 15_000, "the taken-over tick to complete");
      expect((await ticks.getJob(takenOverId))?.attemptsStarted).toBe(2);
      expect(await ran()).toBe(2);
      expect(await ofDueTime()).toHaveLength(1);

      // The next due time is a tick of its own.
      await ticks.add("tick", data, { jobId: `next:${source.id}:${dueAt + 1_000}` });
      await eventually(async () => ((await eventsOf(server, key, source.id)).length === 2 ? true : undefined), 15_000, "the next tick's event");
    } finally {
      await ticks.close();
      await redis.quit();
    }
  });
});
