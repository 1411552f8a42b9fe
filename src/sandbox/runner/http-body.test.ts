import { describe, expect, it } from "vitest";
import { addParsedBody, parseBody } from "./http-body.js";

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

describe("addParsedBody", () => {
  it("adds body after the fields the event has, parsed by its content type", () => {
    const event = addParsedBody({ method: "POST", headers: { "content-type": "application/json" }, bodyRaw: '{"a":1}' });
    expect(Object.keys(event as object)).toEqual(["method", "headers", "bodyRaw", "body"]);
    expect(event).toEqual({ method: "POST", headers: { "content-type": "application/json" }, bodyRaw: '{"a":1}', body: { a: 1 } });
  });

  it("adds no body for an empty one, and leaves what is not an event alone", () => {
    expect(Object.keys(addParsedBody({ headers: {}, bodyRaw: "" }) as object)).toEqual(["headers", "bodyRaw"]);
    expect(addParsedBody(null)).toBeNull();
  });
});
