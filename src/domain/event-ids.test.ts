import { describe, expect, it } from "vitest";
import { compareEventIds, formatEventId, nextEventIds, parseEventId } from "./event-ids.js";

describe("parseEventId", () => {
  it.each([
    ["1606511826306-0", { ms: 1606511826306, seq: 0 }],
    ["0-0", { ms: 0, seq: 0 }],
    ["5-12", { ms: 5, seq: 12 }],
  ])("reads %s", (id, parts) => {
    expect(parseEventId(id)).toEqual(parts);
    expect(formatEventId(parts)).toBe(id);
  });

  it.each([[""], ["1606511826306"], ["1606511826306-"], ["-0"], ["01-0"], ["1-01"], ["1-0-0"], ["a-0"], ["1.5-0"], [" 1-0"], ["99999999999999999-0"]])(
    "refuses %j",
    (id) => {
      expect(parseEventId(id)).toBeNull();
    },
  );
});

describe("compareEventIds", () => {
  it.each([
    ["9-0", "10-0", -1],
    ["10-0", "9-0", 1],
    ["10-2", "10-10", -1],
    ["10-10", "10-2", 1],
    ["7-3", "7-3", 0],
  ])("%s vs %s → %i", (a, b, expected) => {
    expect(compareEventIds(a, b)).toBe(expected);
  });

  it("sorts ids numerically where string order would not", () => {
    const ids = ["10-0", "9-1", "9-10", "9-2"];
    expect([...ids].sort(compareEventIds)).toEqual(["9-1", "9-2", "9-10", "10-0"]);
  });

  it("throws on a malformed id", () => {
    expect(() => compareEventIds("x", "1-0")).toThrow(/not an event id/);
  });
});

describe("nextEventIds", () => {
  it.each([
    ["first ids", null, 1000, 3, ["1000-0", "1000-1", "1000-2"]],
    ["a later millisecond starts at 0", "900-4", 1000, 2, ["1000-0", "1000-1"]],
    ["the same millisecond continues the sequence", "1000-4", 1000, 2, ["1000-5", "1000-6"]],
    ["a clock that went backwards keeps the previous millisecond", "1000-4", 950, 2, ["1000-5", "1000-6"]],
    ["none asked, none given", "1000-4", 1000, 0, []],
  ])("%s", (_title, previous, now, count, expected) => {
    expect(nextEventIds(previous, now, count)).toEqual(expected);
  });

  it("always goes up, whatever the clock does", () => {
    let previous: string | null = null;
    for (const now of [5, 5, 3, 9, 9, 1, 10]) {
      const [id] = nextEventIds(previous, now, 1);
      if (previous !== null) expect(compareEventIds(id!, previous)).toBe(1);
      previous = id!;
    }
  });

  it.each([
    ["bad previous id", "nope", 1, 1],
    ["fractional now", null, 1.5, 1],
    ["negative count", null, 1, -1],
  ])("throws on %s", (_title, previous, now, count) => {
    expect(() => nextEventIds(previous, now, count)).toThrow(RangeError);
  });
});
