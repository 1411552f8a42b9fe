import { describe, expect, it } from "vitest";
import type { TimerTick } from "../../src/queue/job-queue.js";
import { CATCH_UP_LIMIT } from "../../src/queue/bullmq/tick-catch-up.js";
import { fixturePerTest, type QueueFixture } from "./conformance.js";

const LONG_LEASE = 60_000;

/**
 * BullMQ's schedulers make a late tick's next job at the first due time
 * after now: the adapter runs the due times passed over (tick-catch-up.ts).
 * A tick is made late here the way a killed worker makes it late: no
 * instance takes ticks for a while after the first is due.
 */
export function describeTickCatchUp(name: string, makeFixture: () => Promise<QueueFixture>): void {
  describe(`timer ticks taken late: ${name}`, () => {
    const setup = fixturePerTest(makeFixture);
    const open = () => setup.open(LONG_LEASE);

    it("runs every due time a late tick passed over, once each, then ticks on as planned", async () => {
      const timer = await setup.fixture.timer({ intervalSeconds: 0.5, cron: null });
      const ticks: Array<TimerTick & { by: string }> = [];
      const one = await open();
      const two = await open();
      await one.scheduleTimer(timer);
      // The first due time is 500 ms away; nobody takes ticks until about three more have passed.
      await sleep(2_200);
      await one.onTimerTick(async (tick) => void ticks.push({ ...tick, by: "one" }));
      await two.onTimerTick(async (tick) => void ticks.push({ ...tick, by: "two" }));
      await sleep(2_000);
      await one.unscheduleTimer(timer.sourceId);
      await sleep(300);
      const dueTimes = ticks.map((tick) => tick.dueAt).sort((x, y) => x - y);
      expect(new Set(dueTimes).size, JSON.stringify(dueTimes)).toBe(dueTimes.length);
      expect(dueTimes.length, JSON.stringify(dueTimes)).toBeGreaterThanOrEqual(7);
      const gaps = dueTimes.slice(1).map((dueTime, index) => dueTime - dueTimes[index]!);
      expect(new Set(gaps), JSON.stringify(dueTimes)).toEqual(new Set([500]));
      expect(ticks.every((tick) => tick.sourceId === timer.sourceId && tick.ownerId === timer.ownerId)).toBe(true);
    });

    it("runs a cron tick's passed-over due times too, on the pattern", async () => {
      const timer = await setup.fixture.timer({ intervalSeconds: null, cron: "* * * * * *", timezone: "UTC" });
      const ticks: TimerTick[] = [];
      const one = await open();
      await one.scheduleTimer(timer);
      await sleep(3_300);
      await one.onTimerTick(async (tick) => void ticks.push(tick));
      await sleep(1_500);
      await one.unscheduleTimer(timer.sourceId);
      await sleep(300);
      const dueTimes = ticks.map((tick) => tick.dueAt).sort((x, y) => x - y);
      expect(dueTimes.length, JSON.stringify(dueTimes)).toBeGreaterThanOrEqual(4);
      expect(dueTimes.slice(1).map((dueTime, index) => dueTime - dueTimes[index]!), JSON.stringify(dueTimes)).toEqual(dueTimes.slice(1).map(() => 1_000));
    });

    it("runs once, as the tick, what passed while no instance ran at all (more than the bound)", async () => {
      const timer = await setup.fixture.timer({ intervalSeconds: 0.1, cron: null });
      const ticks: TimerTick[] = [];
      const one = await open();
      await one.scheduleTimer(timer);
      await sleep(100 * (CATCH_UP_LIMIT + 8));
      const startedAt = Date.now();
      await one.onTimerTick(async (tick) => void ticks.push(tick));
      await sleep(600);
      await one.unscheduleTimer(timer.sourceId);
      await sleep(300);
      const dueTimes = ticks.map((tick) => tick.dueAt).sort((x, y) => x - y);
      // The first tick, long past; then the scheduler's next after it was taken: nothing between.
      expect(dueTimes[0]!, JSON.stringify(dueTimes)).toBeLessThan(startedAt - 100 * CATCH_UP_LIMIT);
      expect(dueTimes[1]! - dueTimes[0]!, JSON.stringify(dueTimes)).toBeGreaterThan(100 * CATCH_UP_LIMIT);
      expect(new Set(dueTimes).size).toBe(dueTimes.length);
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
