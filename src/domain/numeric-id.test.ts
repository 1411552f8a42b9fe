import { describe, expect, it } from "vitest";
import { isNumericId, numericIdText, numericIdValue } from "./numeric-id.js";

describe("numericIdValue", () => {
  it.each([
    [42, 42n],
    ["42", 42n],
    ["-7", -7n],
    ["+3", 3n],
    [1.5, 1.5],
    ["1.5", 1.5],
    ["1e3", 1000n],
    ["4.0", 4n],
    ["1606511826306123456789", 1606511826306123456789n],
  ])("reads %j as %s", (id, expected) => {
    expect(numericIdValue(id)).toBe(expected);
  });

  it.each([["abc"], [""], [" 42"], ["0x10"], ["1e999"], [Number.NaN], [Number.POSITIVE_INFINITY], [null], [{}], [true]])(
    "refuses %j",
    (id) => {
      expect(numericIdValue(id)).toBeNull();
      expect(isNumericId(id)).toBe(false);
    },
  );

  it("keeps ids beyond 2^53 apart", () => {
    const a = numericIdValue("9007199254740993");
    const b = numericIdValue("9007199254740992");
    expect(a !== null && b !== null && a > b).toBe(true);
  });
});

describe("numericIdText", () => {
  it.each([
    [42n, "42"],
    [1.5, "1.5"],
    [-3n, "-3"],
  ])("writes %s as %s, which reads back to the same value", (value, text) => {
    expect(numericIdText(value)).toBe(text);
    expect(numericIdValue(text)).toBe(value);
  });
});
