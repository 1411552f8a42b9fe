import { describe, expect, it } from "vitest";
import { ValidationError } from "../../domain/errors.js";
import { assertValidCron, firstTick, nextTickAfter, timerEvent, toTimerSchedule } from "./timer-schedule.js";

const interval = { intervalSeconds: 60, cron: null };
const cron = { intervalSeconds: null, cron: "*/5 * * * *" };

describe("timer schedules", () => {
  it.each([
    [{ intervalSeconds: 60 }, interval],
    [{ cron: "*/5 * * * *" }, cron],
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

  it("builds the event run receives", () => {
    expect(timerEvent(interval, 61_999)).toEqual({ timestamp: 61, interval_seconds: 60 });
    expect(timerEvent(cron, 120_000)).toEqual({ timestamp: 120, cron: "*/5 * * * *" });
  });

  it("names the prop of a bad cron expression", () => {
    expect(() => assertValidCron("61 * * * *", "configured_props.timer")).toThrow(ValidationError);
    expect(() => assertValidCron("0 9 * * 1-5", "configured_props.timer")).not.toThrow();
  });
});
