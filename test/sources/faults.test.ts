import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, logsOf } from "../helpers/sources.js";

/** One source whose run misbehaves as `?fault=` says, and otherwise works. */
const FAULTY = `module.exports = {
  name: "Faulty", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event) {
    const fault = event.query.fault;
    if (fault === "env") return this.$emit({ env: Object.keys(process.env) });
    if (fault === "read") return this.$emit({ passwd: require("fs").readFileSync("/etc/passwd", "utf8") });
    if (fault === "spawn") return this.$emit({ out: String(require("child_process").execSync("id")) });
    if (fault === "loop") while (true) {}
    if (fault === "oom") { const hog = []; while (true) hog.push(new Array(1e6).fill(Math.random())); }
    if (fault === "exit") process.exit(3);
    if (fault === "string") throw "a plain string";
    if (fault === "rejection") { Promise.reject(new Error("nobody caught me")); await new Promise((r) => setTimeout(r, 50)); }
    if (fault === "flood") { const line = "x".repeat(1024); for (let i = 0; i < 20000; i++) console.log(line); }
    if (fault === "throw") throw new TypeError("this went wrong");
    this.$emit({ ok: true });
  },
};`;

describe("the sandbox, seen through a deployed source", () => {
  let server: TestServer;
  let source: { id: string; endpoint_url: string };

  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_HTTP_TIMEOUT_SECONDS: "2", RUNNEL_MEMORY_MB: "64" });
    source = await deploySource(server, server.adminKey, { component_code: FAULTY });
  });
  afterAll(() => server.close());

  const hit = (fault: string) => fetch(`${source.endpoint_url}?fault=${fault}`, { method: "POST" });
  const stillWorks = async () => {
    const response = await hit("none");
    expect(response.status).toBe(200);
    expect((await eventsOf(server, server.adminKey, source.id))[0].event).toEqual({ ok: true });
    expect((await call(server.url, "GET", "/healthz")).status).toBe(200);
  };

  it("gives user code an empty environment", async () => {
    expect((await hit("env")).status).toBe(200);
    expect((await eventsOf(server, server.adminKey, source.id))[0].event).toEqual({ env: [] });
  });

  it.each([
    ["reads a file outside its bundle", "read", /Access to this API has been restricted|ERR_ACCESS_DENIED/],
    ["starts a child process", "spawn", /Access to this API has been restricted|ERR_ACCESS_DENIED/],
    ["loops past its time limit", "loop", /Timeout/],
    ["runs out of memory", "oom", /OutOfMemory/],
    ["calls process.exit", "exit", /ProcessExit/],
    ["throws a string", "string", /NonErrorThrown|a plain string/],
    ["leaves a rejection unhandled", "rejection", /UnhandledRejection|nobody caught me/],
    ["floods its output", "flood", /OutputFlood/],
    ["throws an Error", "throw", /TypeError: this went wrong/],
  ])("contains a run that %s: 5xx, the error in the logs, and the next run works", async (_label, fault, pattern) => {
    const response = await hit(fault);
    expect(response.status).toBe(502);
    const logs = (await logsOf(server, server.adminKey, source.id)).join("\n");
    expect(logs).toMatch(pattern);
    await stillWorks();
  });

  it("logs the stack of a thrown error", async () => {
    await hit("throw");
    const logs = await logsOf(server, server.adminKey, source.id);
    expect(logs.find((text) => text.includes("TypeError: this went wrong"))).toMatch(/\n\s+at /);
  });
});
