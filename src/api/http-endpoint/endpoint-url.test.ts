import { describe, expect, it } from "vitest";
import { parseEndpointUrl } from "./endpoint-url.js";

describe("parseEndpointUrl", () => {
  it.each([
    ["/e/tok", { token: "tok", path: "/", query: {} }],
    ["/e/tok?", { token: "tok", path: "/", query: {} }],
    ["/e/tok/", { token: "tok", path: "/", query: {} }],
    ["/e/tok/a/b", { token: "tok", path: "/a/b", query: {} }],
    ["/e/tok/a%20b/%C3%A9", { token: "tok", path: "/a b/é", query: {} }],
    ["/e/tok/bad%zzescape", { token: "tok", path: "/bad%zzescape", query: {} }],
    ["/e/tok?a=1&a=2&b=&c=x+y%21", { token: "tok", path: "/", query: { a: ["1", "2"], b: "", c: "x y!" } }],
    ["/e/tok/p?q=1", { token: "tok", path: "/p", query: { q: "1" } }],
  ])("reads %s", (url, expected) => {
    const address = parseEndpointUrl(url);
    expect(address).toEqual(expected);
    expect(Object.getPrototypeOf(address!.query)).toBe(Object.prototype);
  });

  it.each(["/e/", "/e", "/e?x=1", "/v1/sources", "/", "/ex/tok", "/e//path"])("leaves %s to the API", (url) => {
    expect(parseEndpointUrl(url)).toBeNull();
  });
});
