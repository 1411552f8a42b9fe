import { afterAll, describe, expect, it } from "vitest";
import { SandboxFixture } from "./helpers.js";

/** Module-level state tells runners apart: a warm runner keeps its loaded module, a new one loads it afresh. */
const TOKENED = (name: string) => `
  const token = require("node:crypto").randomUUID();
  let calls = 0;
  module.exports = {
    name: ${JSON.stringify(name)},
    async run(event) {
      calls += 1;
      const start = Date.now();
      if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
      return { token, pid: process.pid, calls, start, end: Date.now() };
    },
  };
`;

interface Answer {
  token: string;
  pid: number;
  calls: number;
  start: number;
  end: number;
}

describe("the runner pool", () => {
  const fixture = new SandboxFixture({ maxRunners: 2 });
  afterAll(() => fixture.close());

  const answer = async (bundle: ReturnType<typeof fixture.bundle>, event: Record<string, unknown> = {}): Promise<Answer> => {
    const result = await fixture.invoke(bundle, { call: { kind: "run", event } });
    expect(result.error).toBeUndefined();
    return result.value as Answer;
  };

  it("reuses a warm runner for the same owner and bundle", async () => {
    const bundle = fixture.bundle(TOKENED("warm"));
    const first = await answer(bundle);
    const second = await answer(bundle);
    expect(second.token).toBe(first.token);
    expect(second.pid).toBe(first.pid);
    expect(second.calls).toBe(2);
  });

  it("runs two bundles in parallel, in different runners", async () => {
    const a = fixture.bundle(TOKENED("a"));
    const b = fixture.bundle(TOKENED("b"));
    const [first, second] = await Promise.all([answer(a, { sleepMs: 400 }), answer(b, { sleepMs: 400 })]);
    expect(first.token).not.toBe(second.token);
    // Both were running at the same time.
    expect(first.start).toBeLessThan(second.end);
    expect(second.start).toBeLessThan(first.end);
  });

  it("gives the same bundle of another owner a runner of its own", async () => {
    const source = TOKENED("shared");
    const mine = fixture.bundle(source, { ownerId: "user_1" });
    const theirs = { ...mine, ownerId: "user_2" };
    expect((await answer(mine)).token).not.toBe((await answer(theirs)).token);
  });

  it("queues calls when every runner is busy, and evicts the least recently used idle runner", async () => {
    const bundles = [fixture.bundle(TOKENED("q1")), fixture.bundle(TOKENED("q2")), fixture.bundle(TOKENED("q3"))] as const;
    const [one, two, three] = await Promise.all([answer(bundles[0], { sleepMs: 100 }), answer(bundles[1], { sleepMs: 1500 }), answer(bundles[2])]);
    expect(one && two && three).toBeTruthy();
    // Two runners at most: the third call started only after q1's ended, in the place of q1's runner.
    expect(three?.start).toBeGreaterThanOrEqual(one?.end ?? Infinity);
    expect(three?.start).toBeLessThan(two?.end ?? 0);
    // q1's runner was the least recently used idle one: it was stopped to make room, so q1 loads afresh.
    const again = await answer(bundles[0]);
    expect(again.token).not.toBe(one?.token);
  });

  it("replaces a runner whose leftover work fails after its call ended", async () => {
    const bundle = fixture.bundle(`
      const token = require("node:crypto").randomUUID();
      module.exports = {
        name: "leftover",
        run(event) {
          if (event.late === "throw") setTimeout(() => { throw new Error("late"); }, 20);
          if (event.late === "emit") setTimeout(() => this.$emit({ late: true }), 20);
          return token;
        },
      };
    `);
    for (const late of ["throw", "emit"]) {
      const first = await fixture.invoke(bundle, { call: { kind: "run", event: { late } } });
      expect(first).toMatchObject({ ok: true, emits: [] });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const second = await fixture.invoke(bundle);
      expect(second.ok).toBe(true);
      expect(second.value).not.toBe(first.value);
    }
  });

  it("stops idle runners after idleMs", async () => {
    const idle = new SandboxFixture({ idleMs: 150 });
    try {
      const bundle = idle.bundle(TOKENED("idle"));
      const first = (await idle.invoke(bundle)).value as Answer;
      await new Promise((resolve) => setTimeout(resolve, 500));
      const second = (await idle.invoke(bundle)).value as Answer;
      expect(second.token).not.toBe(first.token);
    } finally {
      await idle.close();
    }
  });

  it("answers calls queued at close with an error, and refuses calls after it", async () => {
    const closing = new SandboxFixture({ maxRunners: 1 });
    const bundle = closing.bundle(TOKENED("closing"));
    const running = closing.invoke(bundle, { call: { kind: "run", event: { sleepMs: 5_000 } } });
    const queued = closing.invoke(closing.bundle(TOKENED("queued")));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await closing.close();
    expect((await running).error).toMatchObject({ code: "RunnerCrashed", message: "The sandbox was closed during the call." });
    expect((await queued).error).toMatchObject({ code: "RunnerCrashed", message: "The sandbox was closed before the call could start." });
    await expect(closing.invoke(bundle)).rejects.toThrow("The sandbox is closed.");
  });
});
