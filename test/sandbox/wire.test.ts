import { afterAll, describe, expect, it } from "vitest";
import { SandboxFixture } from "./helpers.js";

/**
 * User code attacking the wire between the host and its runner: descriptor
 * 3 is the runner's channel, and the permission model does not guard
 * descriptors. Each attack must cost only the attacker's own call (and
 * runner), with an error that says what happened; the host goes on.
 */
const attack = (body: string) => `
  const fs = require("node:fs");
  module.exports = { name: "wire attack", async run(event) { ${body} return "survived"; } };
`;

describe("the wire under attack", () => {
  const fixture = new SandboxFixture();
  afterAll(() => fixture.close());
  const ok = fixture.bundle(`module.exports = { name: "ok", run(e) { return "fine " + e.n; } };`);

  it.each([
    ["300 MB without a newline", `const chunk = Buffer.alloc(1024 * 1024, "a"); for (let i = 0; i < 300; i++) fs.writeSync(3, chunk);`, /a frame header announced 1633771873 bytes/],
    // A frame of random bytes: its header is right (a random one announced less than the most allowed about once in
    // seventy runs, and the host then waited for a body that never came, until the call's time limit).
    ["random garbage", `const body = require("node:crypto").randomBytes(4092); const h = Buffer.alloc(4); h.writeUInt32BE(body.length, 0); fs.writeSync(3, Buffer.concat([h, body])); await new Promise((r) => setTimeout(r, 200));`, /was not JSON/],
    ["a header claiming 4 GB", `const h = Buffer.alloc(4); h.writeUInt32BE(0xffffffff, 0); fs.writeSync(3, h); await new Promise((r) => setTimeout(r, 200));`, /4294967295 bytes/],
    ["a well-formed frame holding no message", `const body = Buffer.from(JSON.stringify({ type: "pwn", id: 1 })); const h = Buffer.alloc(4); h.writeUInt32BE(body.length, 0); fs.writeSync(3, Buffer.concat([h, body])); await new Promise((r) => setTimeout(r, 200));`, /a frame held a message of no known shape/],
    ["closing the channel", `fs.closeSync(3); await new Promise((r) => setTimeout(r, 3000));`, /the runner closed its channel/],
  ])("%s: the call fails saying so, and the next call runs on a fresh runner", async (_name, body, reason) => {
    const result = await fixture.invoke(fixture.bundle(attack(body)), { limits: { timeoutMs: 10_000, memoryMb: 128, maxLogBytes: 1024 * 1024 } });
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("RunnerCrashed");
    expect(result.error?.message).toMatch(reason);
    expect(result.error?.message).toContain("descriptor 3");
    const next = await fixture.invoke(ok, { call: { kind: "run", event: { n: 1 } } });
    expect(next.value).toBe("fine 1");
  });

  it("stops a flood written straight to standard output at the log limit, as a console flood is stopped", async () => {
    // The pipe is non-blocking: a determined flood retries when it is full, as this one does.
    const flood = fixture.bundle(attack(`const chunk = Buffer.alloc(1024 * 1024, "z"); for (let i = 0; i < 1024; ) { try { fs.writeSync(1, chunk); i++; } catch (error) { if (error.code !== "EAGAIN") throw error; } }`));
    const result = await fixture.invoke(flood, { limits: { timeoutMs: 30_000, memoryMb: 128, maxLogBytes: 256 * 1024 } });
    expect(result.error?.code).toBe("OutputFlood");
    expect(result.error?.message).toContain("straight to its standard output or error");
    // What was kept is within the limit.
    expect(result.logs.reduce((sum, entry) => sum + entry.text.length, 0)).toBeLessThanOrEqual(256 * 1024);
    expect((await fixture.invoke(ok, { call: { kind: "run", event: { n: 2 } } })).value).toBe("fine 2");
  });

  it("refuses to send a response too big for the wire, as the call's own error", async () => {
    const big = fixture.bundle(`module.exports = { name: "big", props: { http: { type: "$.interface.http", customResponse: true } }, run() { this.http.respond({ status: 200, body: "x".repeat(100 * 1024 * 1024) }); } };`);
    const result = await fixture.invoke(big, { props: { http: { endpoint: "http://x" } }, limits: { timeoutMs: 30_000, memoryMb: 512, maxLogBytes: 1024 * 1024 } });
    expect(result.ok).toBe(false);
    expect(result.error?.message).toMatch(/The call's respond is 100\.0 MB, more than the 96 MB a runner can send/);
  });
});
