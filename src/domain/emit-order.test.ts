import { describe, expect, it } from "vitest";
import { orderEmits, validateEmitMeta } from "./emit-order.js";

type E = { n: string; ts?: number };
const e = (n: string, ts?: number): E => (ts === undefined ? { n } : { n, ts });
const names = (emits: E[]) => emits.map((x) => x.n).join(" ");

describe("orderEmits", () => {
  it.each([
    ["no ts: emit order", [e("a"), e("b"), e("c")], "a b c"],
    ["all ts: oldest first", [e("a", 3), e("b", 1), e("c", 2)], "b c a"],
    ["equal ts: emit order", [e("a", 5), e("b", 5), e("c", 1)], "c a b"],
    ["no ts at the start: before everything", [e("a"), e("b", 5), e("c", 1)], "a c b"],
    ["no ts: right behind the greatest ts before it", [e("a", 5), e("b"), e("c", 1)], "c a b"],
    ["no ts never overtakes an earlier emit", [e("a", 5), e("b", 3), e("c")], "b a c"],
    ["a later older ts moves ahead of an emit without ts", [e("a", 2), e("b"), e("c", 1), e("d", 9)], "c a b d"],
    ["empty", [], ""],
  ])("%s", (_title, emits, expected) => {
    expect(names(orderEmits(emits))).toBe(expected);
  });

  it("does not change its input", () => {
    const input = [e("a", 2), e("b", 1)];
    orderEmits(input);
    expect(names(input)).toBe("a b");
  });
});

describe("validateEmitMeta", () => {
  it.each([
    [undefined],
    [null],
    [{}],
    [{ id: "abc", name: "orders", summary: "New order", ts: 1606511826306 }],
    [{ id: 42 }],
    [{ id: 0, ts: 0 }],
    [{ name: "" }],
    [{ id: null, name: null, summary: null, ts: null }],
    [{ extra: "left alone" }],
  ])("accepts %j", (meta) => {
    expect(validateEmitMeta(meta)).toBeNull();
  });

  it.each([
    ["not an object", "id", /second argument of \$emit must be an object/],
    [[1], "an array", /must be an object.*got an array/],
    [{ id: "" }, "empty id", /id must be a non-empty string or a finite number; got an empty string/],
    [{ id: Number.NaN }, "NaN id", /id must be .*got NaN/],
    [{ id: { a: 1 } }, "object id", /id must be/],
    [{ id: true }, "boolean id", /id must be/],
    [{ name: 3 }, "numeric name", /name \(the channel\) must be a string/],
    [{ name: "$errors" }, "$errors", /name "\$errors" is reserved/],
    [{ name: "$logs" }, "$logs", /reserved/],
    [{ name: "$custom" }, "$custom", /reserved/],
    [{ summary: 5 }, "numeric summary", /summary must be a string/],
    [{ ts: 1.5 }, "fractional ts", /ts must be epoch milliseconds.*got 1.5/],
    [{ ts: -1 }, "negative ts", /ts must be/],
    [{ ts: "1606511826306" }, "string ts", /ts must be.*got a string/],
    [{ ts: Number.POSITIVE_INFINITY }, "infinite ts", /ts must be/],
  ])("rejects %j (%s)", (meta, _title, message) => {
    expect(validateEmitMeta(meta)).toMatch(message);
  });
});
