import { defaultRepeatStrategy } from "bullmq";
import { describe, expect, it } from "vitest";
import { CATCH_UP_LIMIT, skippedDueTimes } from "./tick-catch-up.js";

const everySecond = (dueTime: number) => dueTime + 1_000;

describe("skippedDueTimes", () => {
  it("finds none when the scheduler's next tick is the one after", () => {
    expect(skippedDueTimes(10_000, 11_000, everySecond)).toEqual({ kind: "none" });
  });

  it("lists the due times between a late tick and the scheduler's next, in order", () => {
    expect(skippedDueTimes(10_000, 13_000, everySecond)).toEqual({ kind: "catch-up", dueTimes: [11_000, 12_000] });
  });

  it("lists up to the bound, and collapses what passes it (no worker ran: the installation was down)", () => {
    const atBound = skippedDueTimes(0, (CATCH_UP_LIMIT + 1) * 1_000, everySecond);
    expect(atBound).toEqual({ kind: "catch-up", dueTimes: Array.from({ length: CATCH_UP_LIMIT }, (_, i) => (i + 1) * 1_000) });
    expect(skippedDueTimes(0, (CATCH_UP_LIMIT + 2) * 1_000, everySecond)).toEqual({ kind: "collapsed", atLeast: CATCH_UP_LIMIT + 1 });
    expect(skippedDueTimes(0, 86_400_000, everySecond)).toEqual({ kind: "collapsed", atLeast: CATCH_UP_LIMIT + 1 });
  });

  it("walks a cron pattern with BullMQ's own strategy (the times its scheduler would have made)", () => {
    const at = Date.UTC(2026, 0, 1, 10, 0, 0);
    const pattern = (dueTime: number) => defaultRepeatStrategy(dueTime, { pattern: "*/5 * * * *", tz: "UTC" });
    expect(skippedDueTimes(at, at + 20 * 60_000, pattern)).toEqual({ kind: "catch-up", dueTimes: [at + 5 * 60_000, at + 10 * 60_000, at + 15 * 60_000] });
  });

  it("stops at a step that does not move forward, or at no next time at all", () => {
    expect(skippedDueTimes(10_000, 20_000, () => 10_000)).toEqual({ kind: "none" });
    expect(skippedDueTimes(10_000, 20_000, (dueTime) => (dueTime < 12_000 ? dueTime + 1_000 : undefined))).toEqual({ kind: "catch-up", dueTimes: [11_000, 12_000] });
  });
});
