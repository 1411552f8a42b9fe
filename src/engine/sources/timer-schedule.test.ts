import { describe, expect, it } from "vitest";
import { ValidationError } from "../../domain/errors.js";
import { assertValidCron, firstTick, nextTickAfter, timerEvent, toTimerSchedule } from "./timer-schedule.js";

const interval = { intervalSeconds: 60, cron: null };
const cron = { intervalSeconds: null, cron: "*/5 * * * *" };

describe("timer schedules", () => {
  it.each([
    [{ intervalSeconds: 60 }, interval],
    [{ cron: "*/5 * * * *" }, cron],
    [{ cron: "30 9 * * *", timezone: "Europe/Paris" }, { intervalSeconds: null, cron: "30 9 * * *", timezone: "Europe/Paris" }],
    [undefined, null],
    [{}, null],
  ])("reads %j", (value, expected) => expect(toTimerSchedule(value)).toEqual(expected));

  it("steps intervals from the previous tick, and skips what was missed while down", () => {
    expect(nextTickAfter(interval, 60_000, 60_500)).toBe(120_000);
    expect(nextTickAfter(interval, 60_000, 500_000)).toBe(560_000);
    expect(firstTick(interval, 1_000)).toBe(61_000);
  });

  it("finds the next cron time after the tick", () => {
    const at = Date.UTC(2026, 0, 1, 10, 2, 0);
    expect(nextTickAfter(cron, at, at)).toBe(Date.UTC(2026, 0, 1, 10, 5, 0));
    expect(firstTick(cron, Date.UTC(2026, 0, 1, 10, 5, 0))).toBe(Date.UTC(2026, 0, 1, 10, 10, 0));
  });

  it("reads a cron in its zone, daylight saving changes included (croner's own next run)", () => {
    const paris = { intervalSeconds: null, cron: "30 9 * * *", timezone: "Europe/Paris" };
    // Paris moves to summer time on 2026-03-29: 09:30 is 08:30 UTC before, 07:30 UTC after.
    const saturday = firstTick(paris, Date.UTC(2026, 2, 27, 12));
    expect(saturday).toBe(Date.UTC(2026, 2, 28, 8, 30));
    const sunday = nextTickAfter(paris, saturday, saturday);
    expect(sunday).toBe(Date.UTC(2026, 2, 29, 7, 30));
    const newYork = (cronText: string) => ({ intervalSeconds: null, cron: cronText, timezone: "America/New_York" });
    // 2026-03-08: 02:00 jumps to 03:00, so 02:30 runs at 03:00 EDT (07:00 UTC), then at 02:30 EDT again.
    const skipped = firstTick(newYork("30 2 * * *"), Date.UTC(2026, 2, 7, 12));
    expect(skipped).toBe(Date.UTC(2026, 2, 8, 7, 0));
    expect(nextTickAfter(newYork("30 2 * * *"), skipped, skipped)).toBe(Date.UTC(2026, 2, 9, 6, 30));
    // 2026-11-01: 01:00-02:00 happens twice; 01:30 runs once (EDT), the next at 01:30 EST the day after.
    const repeated = firstTick(newYork("30 1 * * *"), Date.UTC(2026, 9, 31, 12));
    expect(repeated).toBe(Date.UTC(2026, 10, 1, 5, 30));
    expect(nextTickAfter(newYork("30 1 * * *"), repeated, repeated)).toBe(Date.UTC(2026, 10, 2, 6, 30));
    // Without a zone, UTC whatever the server's own zone.
    expect(firstTick({ intervalSeconds: null, cron: "30 9 * * *" }, Date.UTC(2026, 2, 27, 12))).toBe(Date.UTC(2026, 2, 28, 9, 30));
  });

  it("builds the event run receives", () => {
    expect(timerEvent(interval, 61_999)).toEqual({ timestamp: 61, interval_seconds: 60 });
    expect(timerEvent(cron, 120_000)).toEqual({ timestamp: 120, cron: "*/5 * * * *" });
    expect(timerEvent({ ...cron, timezone: "Asia/Tokyo" }, 120_000)).toEqual({ timestamp: 120, cron: "*/5 * * * *", timezone: "Asia/Tokyo" });
  });

  it("names the prop of a bad cron expression", () => {
    expect(() => assertValidCron("61 * * * *", "configured_props.timer")).toThrow(ValidationError);
    expect(() => assertValidCron("0 9 * * 1-5", "configured_props.timer")).not.toThrow();
  });
});
