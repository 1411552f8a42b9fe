import { describe, expect, it } from "vitest";
import { readHttpRequest } from "./http-request-config.js";

describe("readHttpRequest", () => {
  it("reads the request editor's rows, params, bearer auth and a fields body", () => {
    const request = readHttpRequest("req", {
      method: "post",
      url: "https://api.example.com/items?x=1",
      headers: [{ name: "X-One", value: 1 }, { name: "", value: "no name" }, { name: "X-Off", value: "y", disabled: true }],
      params: [{ name: "page", value: 2 }],
      auth: { type: "bearer", token: "tok" },
      body: { type: "fields", fields: [{ name: "a", value: "b" }] },
    });
    expect(request.method).toBe("POST");
    expect(request.url.toString()).toBe("https://api.example.com/items?x=1&page=2");
    expect(request.headers).toEqual({ "x-one": "1", authorization: "Bearer tok", "content-type": "application/json" });
    expect(request.body?.toString()).toBe('{"a":"b"}');
  });

  it("defaults to GET, drops a GET's body, and lets a given Authorization header win over auth", () => {
    const request = readHttpRequest("req", { url: "http://example.com", headers: { Authorization: "Token mine" }, auth: { username: "u", password: "p" }, body: "ignored" });
    expect(request).toMatchObject({ method: "GET", body: null, headers: { authorization: "Token mine" } });
  });

  it("sends a raw body with its content type, a form as urlencoded, and other JSON as JSON", () => {
    expect(readHttpRequest("r", { method: "PUT", url: "http://e.com", body: { type: "raw", raw: "<a/>", contentType: "application/xml" } })).toMatchObject({ headers: { "content-type": "application/xml" } });
    const form = readHttpRequest("r", { method: "POST", url: "http://e.com", body: { mode: "fields", fields: { a: "1 2" }, contentType: "application/x-www-form-urlencoded" } });
    expect(form.body?.toString()).toBe("a=1+2");
    const json = readHttpRequest("r", { method: "POST", url: "http://e.com", body: [1, { two: 2 }] });
    expect([json.body?.toString(), json.headers["content-type"]]).toEqual(['[1,{"two":2}]', "application/json"]);
  });

  it.each([
    ["nothing configured", undefined, /this\.r has no request configured/],
    ["no url", { method: "GET" }, /this\.r\.url is required/],
    ["a relative url", { url: "/items" }, /absolute URL/],
    ["a file url", { url: "file:///etc/passwd" }, /http or https URL/],
    ["a method with spaces", { url: "http://e.com", method: "GET /x HTTP/1.1" }, /HTTP method/],
    ["an unknown auth type", { url: "http://e.com", auth: { type: "digest" } }, /"basic", "bearer" or "none"/],
    ["headers as text", { url: "http://e.com", headers: "a: b" }, /headers must be an object/],
  ])("refuses %s, naming the field", (_title, configured, message) => {
    expect(() => readHttpRequest("r", configured)).toThrow(message);
  });
});
