import { describe, expect, it } from "vitest";
import { isJsonContentType, jsonNestingDepth, MAX_BODY_DEPTH } from "./body-depth.js";

describe("the nesting depth of a JSON body", () => {
  it.each([
    ["", 0],
    ["42", 0],
    ['"text"', 0],
    ["[]", 1],
    ['{"a":[1,{"b":2}]}', 3],
    ['[[],[[]],[]]', 3],
    // Brackets inside strings do not count, escaped quotes do not end them.
    ['{"a":"[[[[{{{{"}', 1],
    ['{"a":"he said \\"[[[\\" then"}', 1],
    ['["\\\\", [[]]]', 3],
  ])("%s is %i deep", (text, depth) => {
    expect(jsonNestingDepth(text)).toBe(depth);
  });

  it("counts the limit exactly, and stops one past it", () => {
    const at = "[".repeat(MAX_BODY_DEPTH) + "]".repeat(MAX_BODY_DEPTH);
    expect(jsonNestingDepth(at)).toBe(MAX_BODY_DEPTH);
    expect(jsonNestingDepth(`[${at}]`)).toBe(MAX_BODY_DEPTH + 1);
    expect(jsonNestingDepth("[".repeat(1_000_000))).toBe(MAX_BODY_DEPTH + 1);
  });

  it("knows which content types are parsed as JSON", () => {
    expect(isJsonContentType("application/json")).toBe(true);
    expect(isJsonContentType("Application/JSON; charset=utf-8")).toBe(true);
    expect(isJsonContentType("application/vnd.api+json")).toBe(true);
    expect(isJsonContentType("text/plain")).toBe(false);
    expect(isJsonContentType(undefined)).toBe(false);
  });
});
