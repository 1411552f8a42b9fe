import { createServer, request as httpRequest, type Server } from "node:http";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createEndpointHandler } from "../../src/api/http-endpoint/endpoint-handler.js";
import { parseEndpointUrl } from "../../src/api/http-endpoint/endpoint-url.js";
import type { HttpEvent, HttpHandled } from "../../src/engine/sources/service.js";
import type { HttpResponse } from "../../src/sandbox/http-response.js";

/**
 * The endpoint handler on a real HTTP server, with the sources service
 * scripted: what the HTTP side does with each kind of outcome. The whole path
 * through a real source runs in test/sources/http.test.ts.
 */
type Script = (token: string, event: HttpEvent, respond: (response: HttpResponse) => void) => Promise<HttpHandled>;

const stored = (events: number): HttpHandled => ({ customResponse: false, result: { ok: true, events: new Array(events).fill({}), durationMs: 1 } });

let server: Server | undefined;
let closing = false;
const lines: Array<Record<string, unknown>> = [];

async function serve(script: Script): Promise<string> {
  const logger = pino({ level: "info" }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const handler = createEndpointHandler({ sources: { handleHttp: script }, logger, isClosing: () => closing });
  server = createServer((request, response) => handler(request, response, parseEndpointUrl(request.url!)!));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

afterEach(async () => {
  closing = false;
  lines.length = 0;
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe("the endpoint handler", () => {
  it("hands the source the request as its event and answers once it is stored", async () => {
    const seen: HttpEvent[] = [];
    const url = await serve(async (token, event) => {
      expect(token).toBe("secret-token");
      seen.push(event);
      return stored(2);
    });
    const response = await fetch(`${url}/e/secret-token/a/b?x=1`, { method: "PATCH", headers: { "x-one": "1" }, body: "héllo" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await response.json()).toEqual({ success: true, events: 2 });
    expect(seen[0]).toMatchObject({ method: "PATCH", path: "/a/b", query: { x: "1" }, bodyRaw: "héllo" });
    expect(seen[0]!.headers["x-one"]).toBe("1");
  });

  it("logs one line per request, without the token", async () => {
    const url = await serve(async () => stored(1));
    await (await fetch(`${url}/e/secret-token/deep/path`, { method: "POST", body: "x" })).text();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: "request", method: "POST", url: "/e/:token/*", status: 200 });
    expect(JSON.stringify(lines)).not.toContain("secret-token");
  });

  it("refuses a streamed body once it passes 512 KB, and closes the connection", async () => {
    let called = false;
    const url = await serve(async () => ((called = true), stored(1)));
    const chunk = new Uint8Array(64 * 1024).fill(120);
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 9; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(`${url}/e/tok`, { method: "POST", body, duplex: "half" } as RequestInit);
    expect(response.status).toBe(413);
    expect(response.headers.get("connection")).toBe("close");
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "PayloadTooLarge", message: expect.stringContaining("512 KB") });
    expect(called).toBe(false);
  });

  it("answers a source's response with the headers it set and the body's own length", async () => {
    const url = await serve(async (_token, _event, respond) => {
      respond({ status: 201, headers: { "x-made-by": "runnel", "content-length": "999", "set-cookie": ["a=1", "b=2"] }, body: "made" });
      return { customResponse: true, result: { ok: true, events: [], durationMs: 1 } };
    });
    const response = await fetch(`${url}/e/tok`);
    expect(response.status).toBe(201);
    expect(response.headers.get("x-made-by")).toBe("runnel");
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("content-length")).toBe("4");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.text()).toBe("made");
  });

  it("answers 502 naming a header Node.js cannot send, instead of a half-written response", async () => {
    const url = await serve(async (_token, _event, respond) => {
      respond({ status: 200, headers: { "x-fine": "yes", "bad header": "x" }, body: "never" });
      return { customResponse: true, result: { ok: true, events: [], durationMs: 1 } };
    });
    const response = await fetch(`${url}/e/tok`);
    expect(response.status).toBe(502);
    expect(response.headers.get("x-fine")).toBeNull();
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/header.*bad header/);
  });

  it("answers 500 for a failure of the server itself, logs it, and keeps serving", async () => {
    let fail = true;
    const url = await serve(async () => {
      if (fail) throw new Error("the database is on fire");
      return stored(1);
    });
    const failed = await fetch(`${url}/e/tok`, { method: "POST", body: "x" });
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe("InternalError");
    expect(lines.some((line) => line.level === 50 && JSON.stringify(line).includes("the database is on fire"))).toBe(true);
    fail = false;
    expect((await fetch(`${url}/e/tok`, { method: "POST", body: "x" })).status).toBe(200);
  });

  it("refuses new requests with 503 while the server shuts down", async () => {
    let called = false;
    const url = await serve(async () => ((called = true), stored(1)));
    closing = true;
    const response = await fetch(`${url}/e/tok`, { method: "POST", body: "x" });
    expect(response.status).toBe(503);
    expect(response.headers.get("connection")).toBe("close");
    expect(called).toBe(false);
  });

  it("survives a client that goes away in the middle of its body", async () => {
    let called = false;
    const url = await serve(async () => ((called = true), stored(1)));
    const { port } = new URL(url);
    await new Promise<void>((resolve) => {
      const request = httpRequest({ host: "127.0.0.1", port, method: "POST", path: "/e/tok", headers: { "content-length": "1000" } });
      request.on("error", () => resolve());
      request.write("only part of it", () => setTimeout(() => (request.destroy(), resolve()), 20));
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(called).toBe(false);
    expect((await fetch(`${url}/e/tok`, { method: "POST", body: "x" })).status).toBe(200);
  });
});
