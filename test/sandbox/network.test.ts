import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxFixture } from "./helpers.js";

/**
 * The network policy as a runner meets it, with real runners: what user code
 * can reach, by every way node offers, and what it is told when it cannot.
 * (Reaching test hosts in network namespaces of their own, and the server
 * end to end, is test/hostile/network.test.ts.)
 */
const PROBE = `
  const net = require("node:net");
  const dns = require("node:dns");
  const tcp = (host, port) => new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.setTimeout(5000, () => socket.destroy(new Error("timeout")));
    socket.on("connect", () => { socket.end("ping"); });
    socket.on("data", (data) => { resolve("answered " + data); socket.destroy(); });
    socket.on("error", (error) => resolve(error.code + ": " + error.message));
  });
  module.exports = {
    name: "net-probe",
    async run({ port, httpPort }) {
      const out = {};
      out.loopback = await tcp("127.0.0.1", port);
      out.localhostName = await tcp("localhost", port);
      out.decimal = await tcp("2130706433", port);
      out.mapped = await tcp("::ffff:127.0.0.1", port);
      out.zero = await tcp("0.0.0.0", port);
      out.metadata = await tcp("169.254.169.254", 80);
      out.private = await tcp("10.1.2.3", 5432);
      out.fetch = await fetch("http://127.0.0.1:" + httpPort + "/").then((r) => r.text(), (e) => "failed: " + (e.cause ? e.cause.message : e.message));
      out.lookup = await dns.promises.lookup("localhost").then((a) => a.address, (e) => e.code);
      out.interfaces = Object.keys(require("node:os").networkInterfaces());
      return out;
    },
  };
`;

let echo: Server;
let web: ReturnType<typeof createHttpServer>;
let port: number;
let httpPort: number;
beforeAll(async () => {
  echo = createTcpServer((socket) => socket.on("data", () => socket.end("pong")));
  web = createHttpServer((_request, response) => response.end("web pong"));
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  port = (echo.address() as AddressInfo).port;
  httpPort = (web.address() as AddressInfo).port;
});
afterAll(() => {
  echo.close();
  web.close();
});

describe("the network policy in a runner", () => {
  const fixture = new SandboxFixture();
  afterAll(() => fixture.close());

  it("runs runners in a network namespace whose way out is the policy (this machine has bubblewrap)", () => {
    expect(fixture.sandbox.isolation).toMatchObject({ bubblewrap: true, network: "policy" });
  });

  it("refuses loopback by address, by name, in decimal, IPv4-mapped and 0.0.0.0, metadata and private ranges, with a message saying why", async () => {
    const result = await fixture.invoke(fixture.bundle(PROBE), { call: { kind: "run", event: { port, httpPort } } });
    expect(result.error).toBeUndefined();
    const out = result.value as Record<string, unknown>;
    const refused = (address: string, range: string) => new RegExp(`^EACCES: Connection to .* refused by Runnel's network policy: ${address.replace(/[.*]/g, "\\$&")} is ${range}`);
    expect(out.loopback).toMatch(refused("127.0.0.1", "loopback"));
    expect(out.localhostName).toMatch(refused("127.0.0.1", "loopback"));
    expect(out.decimal).toMatch(refused("127.0.0.1", "loopback"));
    expect(out.mapped).toMatch(/^EACCES: .*::ffff:127\.0\.0\.1 is loopback/);
    expect(out.zero).toMatch(refused("0.0.0.0", "this host"));
    expect(out.metadata).toMatch(refused("169.254.169.254", "link-local, where cloud metadata services live"));
    expect(out.private).toMatch(refused("10.1.2.3", "a private network"));
    expect(out.fetch).toMatch(/^failed: Connection to 127\.0\.0\.1:\d+ refused by Runnel's network policy/);
    expect(out.lookup).toBe("EACCES");
    // Nothing but its own loopback: code that got around the shim would reach nothing at all.
    expect(out.interfaces).toEqual(["lo"]);
  });
});

describe("an allow list", () => {
  const fixture = new SandboxFixture({ network: { mode: "policy", allow: ["127.0.0.1/32", "localhost"] } });
  afterAll(() => fixture.close());

  it("opens exactly what it names, for raw TCP, fetch and look-ups", async () => {
    const result = await fixture.invoke(fixture.bundle(PROBE), { call: { kind: "run", event: { port, httpPort } } });
    const out = result.value as Record<string, unknown>;
    expect(out.loopback).toBe("answered pong");
    expect(out.localhostName).toBe("answered pong");
    expect(out.fetch).toBe("web pong");
    expect(out.lookup).toBe("127.0.0.1");
    expect(out.metadata).toMatch(/^EACCES: .*169\.254\.169\.254 is link-local/);
    expect(out.private).toMatch(/^EACCES: .*10\.1\.2\.3 is a private network/);
  });
});

describe("without bubblewrap", () => {
  const fixture = new SandboxFixture({ bubblewrap: "off" });
  afterAll(() => fixture.close());

  it("says the policy is not enforced, and still routes ordinary code through it", async () => {
    expect(fixture.sandbox.isolation.network).toBe("unenforced");
    const result = await fixture.invoke(fixture.bundle(PROBE), { call: { kind: "run", event: { port, httpPort } } });
    expect((result.value as Record<string, unknown>).loopback).toMatch(/^EACCES: .*127\.0\.0\.1 is loopback/);
  });
});

describe("RUNNEL_SANDBOX_NETWORK=unrestricted", () => {
  const fixture = new SandboxFixture({ network: { mode: "unrestricted" } });
  afterAll(() => fixture.close());

  it("gives user code the host's network, as the admin chose", async () => {
    expect(fixture.sandbox.isolation.network).toBe("unrestricted");
    const result = await fixture.invoke(fixture.bundle(PROBE), { call: { kind: "run", event: { port, httpPort } } });
    expect((result.value as Record<string, unknown>).loopback).toBe("answered pong");
  });
});
