import { describe, expect, it } from "vitest";
import { parseBody } from "./parse-body.js";

describe("parseBody", () => {
  it.each([
    ['{"a":1}', "application/json", { a: 1 }],
    ['{"a":1}', "application/vnd.api+json; charset=utf-8", { a: 1 }],
    ["{broken", "application/json", "{broken"],
    ["a=1&b=2&b=3", "application/x-www-form-urlencoded", { a: "1", b: ["2", "3"] }],
    ["hello", "text/plain", "hello"],
    ["<x/>", "application/xml", "<x/>"],
    ["raw", undefined, "raw"],
    ["", "application/json", undefined],
  ])("parses %j sent as %s", (raw, type, expected) => {
    expect(parseBody(Buffer.from(raw), type)).toEqual(expected);
  });
});
