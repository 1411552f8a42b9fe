import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { LIMITS, SandboxFixture } from "./helpers.js";

/**
 * Module-level state tells bundles' loads apart (a warm bundle keeps its
 * module, a reloaded one starts afresh), and a global that every bundle of a
 * runner sees tells runners apart (pids do not: each runner may have a pid
 * namespace of its own).
 */
const TOKENED = (name: string) => `
  const crypto = require("node:crypto");
  globalThis.runnerToken ??= crypto.randomUUID();
  const token = crypto.randomUUID();
  let calls = 0;
  module.exports = {
    name: ${JSON.stringify(name)},
    async run(event) {
      calls += 1;
      const start = Date.now();
      if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
      if (event.spin) while (true) {}
      if (event.exit) process.exit(3);
      return { token, runner: globalThis.runnerToken, calls, start, end: Date.now(), uptime: process.uptime() };
    },
  };
`;

interface Answer {
  token: string;
  runner: string;
  calls: number;
  start: number;
  end: number;
  uptime: number;
}

type Bundle = ReturnType<SandboxFixture["bundle"]>;

async function answer(fixture: SandboxFixture, bundle: Bundle, event: Record<string, unknown> = {}): Promise<Answer> {
  const result = await fixture.invoke(bundle, { call: { kind: "run", event } });
  expect(result.error).toBeUndefined();
  return result.value as Answer;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sandbox of its own for one test, closed whatever the test does. */
async function withFixture(options: ConstructorParameters<typeof SandboxFixture>[0], test: (fixture: SandboxFixture) => Promise<void>): Promise<void> {
  const fixture = new SandboxFixture(options);
  try {
    await test(fixture);
  } finally {
    await fixture.close();
  }
}

describe("the runner pool: one owner's components share warm runners", () => {
  const fixture = new SandboxFixture({ maxRunners: 4, maxRunnersPerOwner: 1, spares: 0 });
  afterAll(() => fixture.close());

  it("reuses a warm runner and a loaded module for the same bundle", async () => {
    const bundle = fixture.bundle(TOKENED("warm"));
    const first = await answer(fixture, bundle);
    const second = await answer(fixture, bundle);
    expect(second.token).toBe(first.token);
    expect(second.runner).toBe(first.runner);
    expect(second.calls).toBe(2);
  });

  it("keeps many bundles of one owner loaded in one runner, each with its own module state", async () => {
    const bundles = Array.from({ length: 20 }, (_, index) => fixture.bundle(TOKENED(`many-${index}`)));
    const first = await Promise.all(bundles.map((bundle) => answer(fixture, bundle)));
    const second = await Promise.all(bundles.map((bundle) => answer(fixture, bundle)));
    // One runner (maxRunnersPerOwner 1) for all twenty.
    expect(new Set([...first, ...second].map((one) => one.runner)).size).toBe(1);
    // Twenty module scopes, each kept warm: its own token, its own count.
    expect(new Set(first.map((one) => one.token)).size).toBe(20);
    expect(second.map((one) => one.token)).toEqual(first.map((one) => one.token));
    expect(second.every((one) => one.calls === 2)).toBe(true);
  });

  it("runs calls of two bundles sharing a runner side by side", async () => {
    const [a, b] = [fixture.bundle(TOKENED("side-a")), fixture.bundle(TOKENED("side-b"))];
    const [first, second] = await Promise.all([answer(fixture, a, { sleepMs: 400 }), answer(fixture, b, { sleepMs: 400 })]);
    expect(first.runner).toBe(second.runner);
    expect(first.start).toBeLessThan(second.end);
    expect(second.start).toBeLessThan(first.end);
  });

  it("fails only the call that takes the runner down; a call of another bundle caught in it runs again on a fresh runner", async () => {
    const [crasher, bystander] = [fixture.bundle(TOKENED("crasher")), fixture.bundle(TOKENED("bystander"))];
    for (const event of [{ spin: true }, { exit: true }]) {
      const before = await answer(fixture, bystander);
      const caught = fixture.invoke(bystander, { call: { kind: "run", event: { sleepMs: 600 } } });
      await pause(100);
      const failing = await fixture.invoke(crasher, { call: { kind: "run", event }, limits: { timeoutMs: 300, memoryMb: 128, maxLogBytes: 1 << 20 } });
      expect(failing.error?.code).toBe(event.spin ? "Timeout" : "ProcessExit");
      const survived = await caught;
      expect(survived.error).toBeUndefined();
      // It ran again, alone, on another runner than the one that died.
      expect((survived.value as Answer).runner).not.toBe(before.runner);
    }
  });
});

describe("the runner pool: how many runners an owner gets", () => {
  const runnersOf = async (fixture: SandboxFixture): Promise<number> => {
    const bundle = fixture.bundle(TOKENED("busy"));
    const answers = await Promise.all([1, 2, 3, 4].map(() => answer(fixture, bundle, { sleepMs: 500 })));
    return new Set(answers.map((one) => one.runner)).size;
  };

  it("starts another runner for an owner whose runner already has two batches", async () => {
    await withFixture({ maxRunnersPerOwner: 4, spares: 0 }, async (fixture) => {
      expect(await runnersOf(fixture)).toBe(2);
    });
  });

  it("shares the owner's runner instead while the machine's runners are busy enough", async () => {
    await withFixture({ maxRunnersPerOwner: 4, busyRunnersBeforeSharing: 1, spares: 0 }, async (fixture) => {
      expect(await runnersOf(fixture)).toBe(1);
    });
  });
});

describe("the runner pool: owners never share a runner", () => {
  it("gives the same code of another owner a runner of its own", async () => {
    await withFixture({ spares: 0 }, async (fixture) => {
      const source = TOKENED("shared");
      const mine = fixture.bundle(source, { ownerId: "user_1" });
      const theirs = { ...mine, ownerId: "user_2" };
      const [a, b] = [await answer(fixture, mine), await answer(fixture, theirs)];
      expect(a.runner).not.toBe(b.runner);
      expect(a.token).not.toBe(b.token);
    });
  });

  it("queues a new owner when every runner is busy, then stops the least recently used idle runner to make room", async () => {
    await withFixture({ maxRunners: 2, spares: 0 }, async (fixture) => {
      const [one, two, three] = ["q1", "q2", "q3"].map((name, index) => fixture.bundle(TOKENED(name), { ownerId: `owner_${index}` })) as [Bundle, Bundle, Bundle];
      const [first, second, third] = await Promise.all([answer(fixture, one, { sleepMs: 100 }), answer(fixture, two, { sleepMs: 1500 }), answer(fixture, three)]);
      // Two runners at most: the third owner's call started only after the first's ended, in the place of its runner.
      expect(third.start).toBeGreaterThanOrEqual(first.end);
      expect(third.start).toBeLessThan(second.end);
      // The first owner's runner was the least recently used idle one: stopped, so its bundle loads afresh.
      expect((await answer(fixture, one)).runner).not.toBe(first.runner);
    });
  });

  it("sizes the pool by memory: past the budget, an idle runner of another owner makes room", async () => {
    // A budget smaller than any runner: one runner at a time, whatever the count allows.
    await withFixture({ maxRunners: 8, runnerMemoryMb: 1, spares: 0 }, async (fixture) => {
      const a = fixture.bundle(TOKENED("budget-a"), { ownerId: "owner_a" });
      const b = fixture.bundle(TOKENED("budget-b"), { ownerId: "owner_b" });
      const firstA = await answer(fixture, a);
      const firstB = await answer(fixture, b);
      const againA = await answer(fixture, a);
      expect(firstB.runner).not.toBe(firstA.runner);
      expect(againA.runner).not.toBe(firstA.runner);
      expect(againA.calls).toBe(1);
    });
  });

  it("keeps a spare runner started for a new owner", async () => {
    await withFixture({ spares: 1, spareMemoryMb: LIMITS.memoryMb }, async (fixture) => {
      await answer(fixture, fixture.bundle(TOKENED("first"), { ownerId: "owner_a" }));
      await pause(1_500);
      // The new owner's call ran in a process that had been up since before it was asked for.
      const spare = await answer(fixture, fixture.bundle(TOKENED("newcomer"), { ownerId: "owner_b" }));
      expect(spare.uptime).toBeGreaterThan(1);
    });
  });
});

describe("the runner pool: a runner's loaded bundles", () => {
  it("unloads the least recently used bundle past maxBundlesPerRunner; it loads afresh on its next call", async () => {
    await withFixture({ maxRunnersPerOwner: 1, maxBundlesPerRunner: 2, spares: 0 }, async (fixture) => {
      const [a, b, c] = ["lru-a", "lru-b", "lru-c"].map((name) => fixture.bundle(TOKENED(name))) as [Bundle, Bundle, Bundle];
      const firstA = await answer(fixture, a);
      await answer(fixture, b);
      const firstC = await answer(fixture, c);
      const againC = await answer(fixture, c);
      const againA = await answer(fixture, a);
      expect(new Set([firstA.runner, firstC.runner, againA.runner]).size).toBe(1);
      expect(againC.token).toBe(firstC.token);
      expect(againA.token).not.toBe(firstA.token);
      expect(againA.calls).toBe(1);
    });
  });
});

describe("the runner pool: placing bundles", () => {
  it("runs a bundle whose folder holds the sandbox's own work folder, without copying the runners into themselves", async () => {
    const root = mkdtempSync(join(tmpdir(), "runnel-nested-"));
    const sandbox = createSandbox({ workDir: join(root, "work"), spares: 0 });
    try {
      const file = join(root, "component.cjs");
      writeFileSync(file, TOKENED("nested"));
      const request = { bundle: { id: "nested", ownerId: "u_1", file }, call: { kind: "run" as const, event: {} }, props: {}, dbProps: [], db: {}, limits: LIMITS };
      for (let i = 0; i < 3; i++) expect((await sandbox.invoke(request)).error).toBeUndefined();
    } finally {
      await sandbox.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("the runner pool: lifecycle", () => {
  it("starts no runner before the egress proxy listens, however many first calls arrive at once", async () => {
    const fresh = new SandboxFixture({ spares: 1, spareMemoryMb: LIMITS.memoryMb });
    try {
      const bundles = Array.from({ length: 8 }, (_, index) => fresh.bundle(TOKENED(`first-${index}`), { ownerId: `owner_${index % 3}` }));
      const results = await Promise.all(bundles.map((bundle) => fresh.invoke(bundle)));
      expect(results.map((result) => result.error)).toEqual(bundles.map(() => undefined));
    } finally {
      await fresh.close();
    }
  });

  it("replaces a runner whose leftover work fails after its call ended", async () => {
    await withFixture({ spares: 0 }, async (fixture) => {
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
        await pause(200);
        const second = await fixture.invoke(bundle);
        expect(second.ok).toBe(true);
        expect(second.value).not.toBe(first.value);
      }
    });
  });

  it("stops idle runners after idleMs", async () => {
    await withFixture({ idleMs: 150, spares: 0 }, async (idle) => {
      const bundle = idle.bundle(TOKENED("idle"));
      const first = await answer(idle, bundle);
      await pause(500);
      const second = await answer(idle, bundle);
      expect(second.runner).not.toBe(first.runner);
    });
  });

  it("answers calls queued at close with an error, and refuses calls after it", async () => {
    const closing = new SandboxFixture({ maxRunners: 1, spares: 0 });
    const bundle = closing.bundle(TOKENED("closing"));
    // Its runner started and its module loaded first: under load a cold start took longer than the pause below,
    // and the call was refused as one made after the close ("The sandbox is closed.") rather than cut short.
    await answer(closing, bundle);
    const running = closing.invoke(bundle, { call: { kind: "run", event: { sleepMs: 5_000 } } });
    // Another owner's call waits: the only runner is the first owner's.
    const queued = closing.invoke(closing.bundle(TOKENED("queued"), { ownerId: "user_2" }));
    await pause(300);
    await closing.close();
    expect((await running).error).toMatchObject({ code: "RunnerCrashed", message: "The sandbox was closed during the call." });
    expect((await queued).error).toMatchObject({ code: "RunnerCrashed", message: "The sandbox was closed before the call could start." });
    await expect(closing.invoke(bundle)).rejects.toThrow("The sandbox is closed.");
  });
});

describe("the runner pool's usage (metrics, the process registry)", () => {
  it("counts busy and idle runners, and a cold start only when a batch waited for a process to start", async () => {
    await withFixture({ maxRunners: 3, spares: 1, spareMemoryMb: LIMITS.memoryMb }, async (fixture) => {
      expect(fixture.sandbox.usage()).toEqual({ busy: 0, idle: 0, max: 3, coldStarts: 0 });
      const first = fixture.bundle(TOKENED("warm"), { ownerId: "owner_a" });
      // The first call takes the spare, started ahead: no cold start.
      await answer(fixture, first);
      expect(fixture.sandbox.usage().coldStarts).toBe(0);
      const slow = answer(fixture, first, { sleepMs: 600 });
      await pause(200);
      expect(fixture.sandbox.usage()).toMatchObject({ busy: 1 });
      await slow;
      // A heap size no spare has: its first call starts a runner, the second finds it warm.
      const big = fixture.bundle(TOKENED("big"), { ownerId: "owner_b" });
      for (let call = 0; call < 2; call += 1) expect((await fixture.invoke(big, { call: { kind: "run", event: {} }, limits: { ...LIMITS, memoryMb: 96 } })).ok).toBe(true);
      expect(fixture.sandbox.usage()).toMatchObject({ busy: 0, coldStarts: 1 });
      // owner_a's runner, owner_b's, and the spare started again after the first was taken.
      expect(fixture.sandbox.usage().idle).toBeGreaterThanOrEqual(2);
    });
  });
});
