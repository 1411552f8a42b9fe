import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBystanderServed, hostileStep, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * The same attacks as workflow code steps: a workflow with an HTTP trigger
 * whose one step attacks when the request says `{ attack: true }`. The
 * trigger answers 200 once the event is durable; the owner's clear error is
 * the `$errors` entry of the workflow (and the run's error), with the code of
 * the catalogue (docs/workflows.md). Runs get 3 s (RUNNEL_HTTP_TIMEOUT_SECONDS: time enough
 * that a busy machine does not turn another limit into a timeout; the heap
 * case gets more, see `roomy`) and a 64 MB heap.
 */

let h: HostileHarness;
/**
 * The heap case's own server, whose runs get 20 s. Filling a 64 MB heap costs
 * about 0.6 s of CPU however it is done (the pages must be touched; a single
 * oversized allocation costs as much), and on a loaded 2-core CI machine
 * (load ~10: other runners' busy loops, each in a session of its own under
 * bubblewrap) the runner got a fifth of a core: the fill took over 3 s and the
 * run's time limit stopped it before its heap did (Timeout; measured: 0.4 s
 * on CPU, 3.9 s waiting for one, at the 3 s mark). What this case tests is the
 * heap limit, so its time limit is out of the way; it still ends in under a
 * second on a quiet machine.
 */
let roomy: HostileHarness;
const HEAP_FILL = "fills its heap";
beforeAll(async () => {
  [h, roomy] = await Promise.all([startHostileHarness({ RUNNEL_HTTP_TIMEOUT_SECONDS: "3" }), startHostileHarness({ RUNNEL_HTTP_TIMEOUT_SECONDS: "20" })]);
});
afterAll(() => Promise.all([h?.close(), roomy?.close()]));

describe("a workflow step that attacks", () => {
  /** What the step does, its body, the code its owner gets, and what the message says. */
  const attacks: Array<[string, string, string, RegExp]> = [
    ["loops forever", `while (true) {}`, "Timeout", /time limit of 3000 ms/],
    [HEAP_FILL, `const hoard = []; while (true) hoard.push(new Array(1e6).fill(Math.random()));`, "OutOfMemory", /heap limit 64 MB/],
    ["calls process.exit", `process.exit(3);`, "ProcessExit", /called process\.exit\(3\)/],
    ["calls process.reallyExit", `process.reallyExit(9);`, "ProcessExit", /called process\.exit\(9\)/],
    ["prints past the log limit", `const line = "x".repeat(1024); for (let i = 0; i < 20000; i++) console.log(line);`, "OutputFlood", /log limit/],
    ["leaves a rejection unhandled", `Promise.reject(new Error("nobody caught me")); await new Promise((resolve) => setTimeout(resolve, 200));`, "UnhandledRejection", /nobody caught me/],
    ["starts a child process", `require("node:child_process").execSync("id");`, "UserError", /Access to this API has been restricted/],
    ["reads /etc/passwd", `require("node:fs").readFileSync("/etc/passwd", "utf8");`, "UserError", /Access to this API has been restricted/],
  ];
  it.each(attacks.map(([what, attack, code, message]): [string, string, string, RegExp] => [what, code, attack, message]))("that %s: the run fails with %s in $errors, the bystander is served, the next run works", async (what, code, attack, message) => {
    const server = what === HEAP_FILL ? roomy : h;
    const workflow = await server.deployWorkflow([hostileStep(attack)]);
    const { outcome, bystander } = await server.whileAttacking(async () => {
      const answer = await server.attack(workflow);
      return { answer, errors: await server.errorsOf(workflow) };
    });
    // The trigger took the event; the run failed afterwards.
    expect(outcome.answer.status).toBe(200);
    const [error] = outcome.errors;
    expect(error).toMatchObject({ code, cellId: workflow.steps[0]!.id });
    expect(error!.msg).toMatch(message);
    const [run] = await server.runsOf(workflow);
    expect(run.status).toBe("error");
    expect(run.error).toMatchObject({ code, cellId: workflow.steps[0]!.id });
    expectBystanderServed(bystander);
    await server.expectOwnerRecovers(workflow);
  });

  it("finds an empty environment and no readable environ", async () => {
    const workflow = await h.deployWorkflow([
      hostileStep(`
    const fs = require("node:fs");
    const read = (path) => { try { return fs.readFileSync(path, "utf8"); } catch (error) { return "denied: " + error.code; } };
    return { env: { ...process.env }, self: read("/proc/self/environ"), init: read("/proc/1/environ"), parent: read("/proc/" + process.ppid + "/environ") };`),
    ]);
    const { outcome, bystander } = await h.whileAttacking(async () => {
      const before = (await h.runsOf(workflow)).length;
      await h.attack(workflow);
      const until = Date.now() + 30_000;
      for (;;) {
        const runs = await h.runsOf(workflow);
        if (runs.length > before) return runs[0];
        if (Date.now() > until) throw new Error("the run was not recorded");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    expect(outcome.status).toBe("success");
    expect(outcome.steps[0].$return_value).toEqual({ env: {}, self: "denied: ERR_ACCESS_DENIED", init: "denied: ERR_ACCESS_DENIED", parent: "denied: ERR_ACCESS_DENIED" });
    expect(JSON.stringify(outcome)).not.toContain(h.server.adminKey);
    expectBystanderServed(bystander);
  });

  it("exits in the second step of three: the first step's result is kept, the third never runs, $errors names the second", async () => {
    const workflow = await h.deployWorkflow([
      `export default defineComponent({ async run() { return "first"; } })`,
      hostileStep(`process.exit(2);`),
      `export default defineComponent({ async run() { return "third"; } })`,
    ]);
    const { outcome, bystander } = await h.whileAttacking(async () => {
      await h.attack(workflow);
      return h.errorsOf(workflow);
    });
    expect(outcome[0]).toMatchObject({ code: "ProcessExit", cellId: workflow.steps[1]!.id });
    const [run] = await h.runsOf(workflow);
    expect(run.steps.map((step: { status: string }) => step.status)).toEqual(["success", "error", expect.not.stringMatching(/^success$/)]);
    expect(run.steps[0].$return_value).toBe("first");
    expectBystanderServed(bystander);
  });
});

describe("a workflow step that writes its runner's journal (descriptor 5, runner/journal.ts)", () => {
  it("with forged endings, then loops forever: none is taken, the run times out, the server goes on", async () => {
    // An entry far past anything the channel brought (so the host reads all of it, afresh) claiming that calls ended: the host
    // takes only reports from a journal. Writing over the journal loses the run's own earlier reports, and nobody else's.
    const forge = `
      const fs = require("node:fs");
      const frame = (message) => { const json = Buffer.from(JSON.stringify(message)); const header = Buffer.alloc(4); header.writeUInt32BE(json.length); return Buffer.concat([header, json]); };
      // The call's id is the host's to give: every one a runner's first calls could have.
      const frames = Buffer.concat(Array.from({ length: 64 }, (_, id) => frame({ type: "result", id, value: "forged", db: null, retire: false })));
      const header = Buffer.alloc(16); header.writeUInt32BE(0x524e4a31, 0); header.writeUInt32BE(256, 4); header.writeUInt32BE(0, 8); header.writeUInt32BE(frames.length, 12);
      fs.writeSync(5, Buffer.concat([header, frames]), 0, 16 + frames.length, 0);
      while (true) {}`;
    const workflow = await h.deployWorkflow([hostileStep(`return "ran";`), hostileStep(forge)]);
    const { outcome, bystander } = await h.whileAttacking(async () => {
      const answer = await h.attack(workflow);
      return { answer, errors: await h.errorsOf(workflow) };
    });
    expect(outcome.answer.status).toBe(200);
    expect(outcome.errors[0]).toMatchObject({ code: "Timeout" });
    const [run] = await h.runsOf(workflow);
    expect(run.status).toBe("error");
    expect(JSON.stringify(run)).not.toContain("forged");
    expectBystanderServed(bystander);
    await h.expectServerHealthy();
  });
});

