import { describe, expect, it } from "vitest";
import { findNonJson } from "./json-check.js";

describe("findNonJson", () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = { back: circular };
  it.each<[string, unknown, string | null]>([
    ["plain data", { a: [1, "x", null, { b: true }], c: undefined }, null],
    ["undefined in an array", [1, undefined], null],
    ["a Date (toJSON)", { when: new Date(0) }, null],
    ["a Map at the top", new Map(), "a Map at the top level"],
    ["undefined at the top", undefined, "undefined at the top level"],
    ["a function deep down", { options: [{}, {}, { load: () => 1 }] }, "a function at .options[2].load"],
    ["a BigInt in an array", [[1n]], "a BigInt at [0][0]"],
    ["a circular reference", circular, "a circular reference at .self.back"],
    ["what toJSON returns", { x: { toJSON: () => new Set() } }, "a Set at .x"],
  ])("%s", (_name, value, expected) => {
    expect(findNonJson(value)).toBe(expected);
  });

  it("names nesting past the limit", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 600; i++) deep = [deep];
    expect(findNonJson(deep)).toMatch(/^nesting deeper than 500 levels at (\[0\]){501}$/);
  });
});
