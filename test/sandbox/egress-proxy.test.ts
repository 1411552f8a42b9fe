import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEgressPolicy } from "../../src/domain/egress-policy.js";
import { EgressProxy } from "../../src/sandbox/network/egress-proxy.js";

/**
 * The egress proxy as a runner speaks to it, over its real Unix socket: the
 * request line, the answer line, then bytes both ways. Names are resolved
 * by a stand-in resolver, so that a name can "rebind" to loopback.
 */

const root = mkdtempSync(join(tmpdir(), "runnel-egress-"));
let upstream: Server;
let upstreamPort: number;
let proxy: EgressProxy;
const names: Record<string, Array<{ address: string; family: number }>> = {
  "rebound.test": [{ address: "127.0.0.1", family: 4 }],
  "mixed.test": [
    { address: "10.0.0.1", family: 4 },
    { address: "127.0.0.1", family: 4 },
  ],
  "trusted.test": [{ address: "127.0.0.1", family: 4 }],
};

beforeAll(async () => {
  upstream = createServer((socket) => socket.on("data", (data) => socket.write(`echo:${data}`)));
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamPort = (upstream.address() as AddressInfo).port;
  proxy = new EgressProxy({
    // Loopback stands in for "the internet" only through the name trusted.test; the address itself stays refused.
    policy: createEgressPolicy(["trusted.test"]),
    socketPath: join(root, "egress.sock"),
    lookup: async (host) => {
      const found = names[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      return found;
    },
  });
  await proxy.start();
});
afterAll(async () => {
  await proxy.close();
  upstream.close();
  rmSync(root, { recursive: true, force: true });
});

/** Sends raw bytes to the proxy and collects all it answers until it closes (or until the answer holds `until`). */
function exchange(payload: string | Buffer, options: { until?: string; end?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection(proxy.socketPath);
    let text = "";
    socket.on("connect", () => (options.end ? socket.end(payload) : socket.write(payload)));
    socket.on("data", (data) => {
      text += data;
      if (options.until !== undefined && text.includes(options.until)) socket.destroy();
    });
    socket.on("close", () => resolve(text));
    socket.on("error", () => undefined);
  });
}

describe("the egress proxy", () => {
  it("refuses a name that resolves to loopback, as DNS rebinding would have it, saying why", async () => {
    const answer = await exchange(`${JSON.stringify({ connect: { host: "rebound.test", port: upstreamPort } })}\n`);
    expect(JSON.parse(answer)).toEqual({
      ok: false,
      code: "EACCES",
      message: expect.stringMatching(/^Connection to rebound\.test:\d+ refused by Runnel's network policy: 127\.0\.0\.1 is loopback/),
    });
  });

  it("connects a name the allow list opens, and pipes bytes sent with the request and after it", async () => {
    const request = `${JSON.stringify({ connect: { host: "trusted.test", port: upstreamPort } })}\nfirst`;
    const answer = await exchange(request, { until: "echo:first" });
    const [line, rest] = [answer.slice(0, answer.indexOf("\n")), answer.slice(answer.indexOf("\n") + 1)];
    expect(JSON.parse(line)).toEqual({ ok: true, address: "127.0.0.1", family: 4, port: upstreamPort });
    expect(rest).toBe("echo:first");
  });

  it("answers look-ups with the allowed addresses only", async () => {
    expect(JSON.parse(await exchange(`${JSON.stringify({ lookup: { host: "trusted.test" } })}\n`, { end: true }))).toEqual({ ok: true, addresses: [{ address: "127.0.0.1", family: 4 }] });
    expect(JSON.parse(await exchange(`${JSON.stringify({ lookup: { host: "mixed.test" } })}\n`, { end: true }))).toMatchObject({ ok: false, code: "EACCES" });
    expect(JSON.parse(await exchange(`${JSON.stringify({ lookup: { host: "nowhere.test" } })}\n`, { end: true }))).toEqual({ ok: false, code: "ENOTFOUND", message: "getaddrinfo ENOTFOUND nowhere.test" });
  });

  it("drops what is not a request, without answering and without harm", async () => {
    expect(await exchange("not json\n")).toBe("");
    expect(await exchange(`${JSON.stringify({ connect: { host: "x.test", port: 70_000 } })}\n`)).toBe("");
    expect(await exchange(`${JSON.stringify({ connect: { host: "a".repeat(300), port: 80 } })}\n`)).toBe("");
    // A request line that never ends: cut off past its limit rather than buffered.
    expect(await exchange(Buffer.alloc(64 * 1024, 0x61))).toBe("");
    // Still serving.
    expect(JSON.parse(await exchange(`${JSON.stringify({ lookup: { host: "trusted.test" } })}\n`, { end: true })).ok).toBe(true);
  });

  it("reports a connection the target refuses as that target's error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    const answer = JSON.parse(await exchange(`${JSON.stringify({ connect: { host: "trusted.test", port } })}\n`));
    expect(answer).toMatchObject({ ok: false, code: "ECONNREFUSED", message: expect.stringContaining(`connect ECONNREFUSED trusted.test:${port}`) });
  });
});
