import { describe, expect, it } from "vitest";
import { tally } from "./tally.js";

describe("a chaos run's tally", () => {
  it("counts stored, lost, doubled, and stored without an acknowledgement", () => {
    expect(tally(new Set(["a", "b", "c", "d"]), ["a", "b", "b", "x"])).toEqual({ acknowledged: 4, stored: 2, doubled: 1, lost: 2, storedUnacknowledged: 1 });
  });

  it("is clean when every acknowledged id is stored once", () => {
    expect(tally(new Set(["a", "b"]), ["b", "a"])).toEqual({ acknowledged: 2, stored: 2, doubled: 0, lost: 0, storedUnacknowledged: 0 });
  });
});
