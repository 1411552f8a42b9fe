import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBystanderServed, respondingRunBody, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * The attack that used to take the whole server down for good: user code
 * writing raw bytes to the runner's channel (descriptor 3). Now it costs the
 * attacker's own call; the server and another user go on.
 */
const FLOOD_CHANNEL = `
  const fs = require("node:fs");
  const chunk = Buffer.alloc(1024 * 1024, "a");
  for (let i = 0; i < 300; i++) fs.writeSync(3, chunk);
`;

let h: HostileHarness;
beforeAll(async () => {
  h = await startHostileHarness();
});
afterAll(() => h?.close());

describe("a component that writes to its runner's channel", () => {
  it("as a source: its request fails with a clear error, its logs say why, the bystander is served, the server lives", async () => {
    const source = await h.deploySource(respondingRunBody(`${FLOOD_CHANNEL} this.http.respond({ status: 200, body: "survived" });`));
    const { outcome, bystander } = await h.whileAttacking(() => Promise.all([h.fire(source, { json: { go: 1 } }), h.fire(source, { json: { go: 2 } })]));
    for (const answer of outcome) {
      expect(answer.status).toBe(502);
      expect(JSON.stringify(answer.body)).toContain("The runner was stopped because its channel to the server carried something that is not a message");
    }
    expectBystanderServed(bystander);
    expect((await h.logsOf(source)).join("\n")).toContain("descriptor 3");
    await h.expectServerHealthy();
  });

  it("as a workflow step fired by an anonymous request: the run becomes an error of that workflow, and the server goes on", async () => {
    const workflow = await h.deployWorkflow([`export default defineComponent({ async run() { ${FLOOD_CHANNEL} return "survived"; } })`]);
    const { bystander } = await h.whileAttacking(() => h.fire(workflow, { json: { anonymous: true } }));
    expectBystanderServed(bystander);
    const [error] = await h.errorsOf(workflow);
    // A runner that died is the platform's InternalFailure to the workflow (docs/workflows.md); the message says why.
    expect(error!.code).toBe("InternalFailure");
    expect(JSON.stringify(error)).toContain("descriptor 3");
    await h.expectServerHealthy();
  });

  it("a flood straight to standard output stops the call at the log limit", async () => {
    const source = await h.deploySource(
      respondingRunBody(`
        const fs = require("node:fs"); const chunk = Buffer.alloc(1024 * 1024, "z");
        for (let i = 0; i < 10240; ) { try { fs.writeSync(1, chunk); i++; } catch (error) { if (error.code !== "EAGAIN") throw error; } }
        this.http.respond({ status: 200, body: "survived" });`),
    );
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source));
    expect(outcome.status).toBe(502);
    expect(JSON.stringify(outcome.body)).toContain("straight to its standard output or error");
    expectBystanderServed(bystander);
  });
});

/**
 * The runner's journal (descriptor 5, runner/journal.ts) is the one file a
 * runner can write, and its code can reach it too: the kernel bounds its size
 * (RLIMIT_FSIZE), and the host trusts what it reads there no more than the
 * channel.
 */
describe("a component that writes to its runner's journal", () => {
  it("past the size bound: the kernel refuses the write (EFBIG), the component gets the error, the server goes on", async () => {
    // Node ignores SIGXFSZ, so the write past RLIMIT_FSIZE fails rather than the process.
    const source = await h.deploySource(
      respondingRunBody(`
      const fs = require("node:fs");
      let outcome = "written";
      try { fs.writeSync(5, Buffer.alloc(1024, "a"), 0, 1024, 200 * 1024 * 1024); } catch (error) { outcome = error.code; }
      this.http.respond({ status: 200, body: { outcome } });`),
    );
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source, { json: { go: 1 } }));
    expect(outcome).toEqual({ status: 200, body: { outcome: "EFBIG" } });
    expectBystanderServed(bystander);
    await h.expectServerHealthy();
  });

});

