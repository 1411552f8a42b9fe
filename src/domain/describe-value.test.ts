import { describe, expect, it } from "vitest";
import { describeValue } from "./describe-value.js";

describe("describeValue", () => {
  it.each([
    [null, "null"],
    [undefined, "nothing"],
    [[1, 2], "an array"],
    ["", "an empty string"],
    ["secret value", "a string"],
    [1.5, "1.5"],
    [Number.NaN, "NaN"],
    [true, "true"],
    [{ a: 1 }, "an object"],
    [10n, "a bigint"],
  ])("describes %s as %s", (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });
});
