import { describe, expect, it } from "vitest";
import { fillMinutes, windowStart } from "./activity.js";

describe("activity minutes", () => {
  const now = Date.UTC(2026, 0, 1, 12, 30, 45);
  it("starts the window so that it ends with the current minute", () => {
    expect(windowStart(now, 1)).toBe(Date.UTC(2026, 0, 1, 12, 30));
    expect(windowStart(now, 60)).toBe(Date.UTC(2026, 0, 1, 11, 31));
  });

  it("gives one bucket per minute, oldest first, zeros where nothing was counted", () => {
    const current = Math.floor(now / 60_000);
    const buckets = fillMinutes(now, 3, [{ minute: current - 1, runs: 2, events: 5, errors: 1 }, { minute: current - 10, runs: 9, events: 9, errors: 9 }]);
    expect(buckets.map((bucket) => [bucket.startMs, bucket.runs, bucket.events, bucket.errors])).toEqual([
      [(current - 2) * 60_000, 0, 0, 0],
      [(current - 1) * 60_000, 2, 5, 1],
      [current * 60_000, 0, 0, 0],
    ]);
  });
});
