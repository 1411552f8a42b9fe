import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBystanderServed, hostileSource, respondingRunBody, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * Exhaustion: code that spends its runner's time, heap, output or life. The
 * run fails with the code the owner's catalogue names (docs/workflows.md),
 * the caller gets 502 saying so, the owner's logs say why, the runner is
 * replaced (the owner's next call works) and the bystander is answered
 * throughout. Limits are short: 1 s per run, a 64 MB heap.
 */

let h: HostileHarness;
beforeAll(async () => {
  h = await startHostileHarness();
});
afterAll(() => h?.close());

describe("a component exhausting its runner", () => {
  /** What the code does, its run's body, the code the owner gets, and what the message says. */
  const attacks: Array<[string, string, string, RegExp]> = [
    ["loops forever", `while (true) {}`, "Timeout", /did not finish within its time limit of 1000 ms/],
    ["waits forever on a promise that never settles", `await new Promise(() => {});`, "Timeout", /did not finish within its time limit of 1000 ms/],
    ["fills its heap", `const hoard = []; while (true) hoard.push(new Array(1e6).fill(Math.random()));`, "OutOfMemory", /ran out of memory \(heap limit 64 MB\)/],
    ["calls process.exit", `process.exit(3);`, "ProcessExit", /called process\.exit\(3\)/],
    ["calls process.reallyExit", `process.reallyExit(4);`, "ProcessExit", /called process\.exit\(4\)/],
    ["replaces process.exit first and then exits", `const exit = process.reallyExit; process.exit = () => {}; exit.call(process, 5);`, "ProcessExit", /called process\.exit\(5\)/],
    ["calls process.abort", `process.abort();`, "RunnerCrashed", /The runner process exited with code \d+ during the call/],
    ["prints past its log limit", `const line = "x".repeat(1024); for (let i = 0; i < 20000; i++) console.log(line);`, "OutputFlood", /printed more than its log limit \(1048576 bytes or 50000 lines\)/],
    ["prints a million tiny lines", `for (let i = 0; i < 1e6; i++) console.error(i);`, "OutputFlood", /printed more than its log limit/],
    ["emits past the emit limit, one event at a time", `const big = "x".repeat(1024 * 1024); for (let i = 0; i < 40; i++) this.$emit({ big, i });`, "UserError", /this\.\$emit\(\): this call emitted more than 33554432 bytes of events/],
    ["emits one event past the emit limit", `this.$emit({ big: "x".repeat(33 * 1024 * 1024) });`, "UserError", /this\.\$emit\(\): this call emitted more than 33554432 bytes of events/],
    ["leaves a rejection unhandled", `Promise.reject(new Error("nobody caught me")); await new Promise((resolve) => setTimeout(resolve, 200));`, "UnhandledRejection", /Unhandled promise rejection: nobody caught me/],
    ["leaves a rejection of a string unhandled", `Promise.reject("a plain string"); await new Promise((resolve) => setTimeout(resolve, 200));`, "UnhandledRejection", /Unhandled promise rejection: .*a plain string/],
    ["throws from a timer during the call", `setTimeout(() => { throw new Error("from a timer"); }, 10); await new Promise((resolve) => setTimeout(resolve, 300));`, "UserError", /from a timer/],
  ];
  it.each(attacks.map(([what, attack, code, message]): [string, string, string, RegExp] => [what, code, attack, message]))("contains code that %s: 502 with %s, the owner's logs say why, the owner's next call works", async (_what, code, attack, message) => {
    // A heap of 256 MB for the emits, so that the emit limit is what stops them (a 64 MB heap would run out first).
    // The time limit is what stops a loop; any other attack gets time enough that its own limit stops it first, however busy the machine.
    const timeout_seconds = code === "Timeout" ? 1 : 10;
    const source = await h.deploySource(hostileSource(attack), /emit/.test(attack) ? { timeout_seconds, memory_mb: 256 } : { timeout_seconds });
    const { outcome, bystander } = await h.whileAttacking(() => h.attack(source));
    expect(outcome.status).toBe(502);
    expect(outcome.body.error).toMatchObject({ code: "SourceFailed", details: { code } });
    expect(outcome.body.error.message).toMatch(message);
    expect(outcome.body.error.message).toContain("Its owner can see why in its logs");
    // The owner's log line names the code, as the catalogue does.
    const logs = await h.logsOf(source);
    expect(logs.some((line) => line.endsWith(`[${code}]`) && message.test(line)), `a log line of ${code} in ${JSON.stringify(logs).slice(0, 500)}`).toBe(true);
    // What a failed run emitted before it failed is kept (emits stream), never past the emit limit.
    const stored = (await h.eventsOf(source)).reduce((bytes: number, event: unknown) => bytes + JSON.stringify(event).length, 0);
    expect(stored).toBeLessThanOrEqual(32 * 1024 * 1024);
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("contains work that fails after its call has ended: the call succeeded, the runner is replaced, the next call works", async () => {
    // Each runner counts the calls it served: a replaced runner starts again from 1.
    const source = await h.deploySource(
      respondingRunBody(`
    globalThis.served = (globalThis.served || 0) + 1;
    if (event.query.attack !== undefined) {
      setTimeout(() => { throw new Error("thrown after the call ended"); }, 50);
      setTimeout(() => Promise.reject(new Error("rejected after the call ended")), 60);
    }
    this.http.respond({ status: 200, body: { served: globalThis.served } });`),
      { timeout_seconds: 1 },
    );
    expect(await h.fire(source)).toEqual({ status: 200, body: { served: 1 } });
    const { outcome, bystander } = await h.whileAttacking(async () => {
      const answer = await h.fire(source, { query: "?attack" });
      // Long enough for the timers to fire and the host to hear of it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return answer;
    });
    expect(outcome).toEqual({ status: 200, body: { served: 2 } });
    expectBystanderServed(bystander);
    expect(await h.fire(source)).toEqual({ status: 200, body: { served: 1 } });
    expect(await h.fire(source)).toEqual({ status: 200, body: { served: 2 } });
  });

  it("tells the owner, in its source's logs, that work a call left behind failed after the call ended", async () => {
    const source = await h.deploySource(
      respondingRunBody(`
    if (event.query.attack !== undefined) setTimeout(() => { throw new Error("late trouble 5e1f"); }, 50);
    this.http.respond({ status: 200, body: { ok: true } });`),
      { timeout_seconds: 1 },
    );
    expect(await h.fire(source, { query: "?attack" })).toEqual({ status: 200, body: { ok: true } });
    let logs: string[] = [];
    for (let tries = 0; tries < 50 && !logs.some((line) => line.includes("late trouble 5e1f")); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      logs = await h.logsOf(source);
    }
    const line = logs.find((entry) => entry.includes("late trouble 5e1f"));
    expect(line).toMatch(/^Work that a call left running failed after the call ended, so the code's runner was replaced: Error: late trouble 5e1f/);
    expect(line).toContain("Await everything run() starts");
    await h.expectOwnerRecovers(source);
  });
});
