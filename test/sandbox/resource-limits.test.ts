import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MEMORY_HEADROOM_MB, PIDS_PER_RUNNER } from "../../src/sandbox/resources/resource-limiter.js";
import { SandboxFixture } from "./helpers.js";

/**
 * Limits on a runner as a whole, with real runners: memory counted on
 * everything the process holds (Buffers too, not only the heap), threads
 * and processes, and CPU. This machine kind (and CI) has cgroup v1 and
 * runs as root, so cgroups are expected here: a silent fall back fails.
 */
const BUFFERS = `module.exports = { name: "buffers", run(e) { const held = []; for (let i = 0; i < e.megabytes / 16; i++) held.push(Buffer.alloc(16 * 1024 * 1024, 1)); return held.length * 16; } };`;
const LIMITS = { timeoutMs: 20_000, memoryMb: 128, maxLogBytes: 1024 * 1024 };

function runnerCgroups(): string[] {
  const own = readFileSync("/proc/self/cgroup", "utf8").split("\n").find((line) => line.split(":")[1]?.split(",").includes("memory"));
  const dir = join("/sys/fs/cgroup/memory", own!.split(":")[2]!);
  return readdirSync(dir).filter((name) => name.startsWith(`runnel-${process.pid}-`)).flatMap((name) => readdirSync(join(dir, name)).filter((entry) => entry.startsWith("runner-")).map((entry) => join(dir, name, entry)));
}

describe("a runner's memory, counted as a whole", () => {
  const fixture = new SandboxFixture();
  afterAll(() => fixture.close());

  it("is limited by a cgroup of its own on this machine, with a pids limit and a CPU cap", () => {
    expect(fixture.sandbox.isolation).toMatchObject({ memory: "cgroup-v1", pidsLimit: PIDS_PER_RUNNER, cpuLimited: true });
  });

  it("stops a runner holding 2 GB of Buffers under a 128 MB heap, naming the limit, and the next call works", async () => {
    const bundle = fixture.bundle(BUFFERS);
    const result = await fixture.invoke(bundle, { call: { kind: "run", event: { megabytes: 2048 } }, limits: LIMITS });
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe("OutOfMemory");
    expect(result.error?.message).toContain(`memory limit of ${128 + MEMORY_HEADROOM_MB} MB (heap, Buffers and native memory together`);
    const small = await fixture.invoke(bundle, { call: { kind: "run", event: { megabytes: 32 } }, limits: LIMITS });
    expect(small.value).toBe(32);
  });

  it("writes the limits into the runner's cgroups while it runs, and removes them when it is gone", async () => {
    // A sandbox of its own, and its runners' cgroups only: the test files run before this one in the same Vitest
    // worker (one process for all its files) may have left runners of theirs, which are not this sandbox's to remove.
    const before = new Set(runnerCgroups());
    const own = new SandboxFixture();
    const bundle = own.bundle(`module.exports = { name: "probe", run() { return 1; } };`);
    await own.invoke(bundle, { limits: LIMITS });
    const live = runnerCgroups().filter((dir) => !before.has(dir));
    expect(live.length).toBeGreaterThan(0);
    const limits = live.map((dir) => Number(readFileSync(join(dir, "memory.limit_in_bytes"), "utf8")));
    expect(limits).toContain((128 + MEMORY_HEADROOM_MB) * 1024 * 1024);
    await own.close();
    for (const dir of live) expect(existsSync(dir)).toBe(false);
  });
});

describe("without cgroups (RLIMIT_AS)", () => {
  const fixture = new SandboxFixture({ resources: "rlimit" });
  afterAll(() => fixture.close());

  it("still keeps Buffers from growing without bound", async () => {
    expect(fixture.sandbox.isolation.memory).toBe("rlimit");
    const result = await fixture.invoke(fixture.bundle(BUFFERS), { call: { kind: "run", event: { megabytes: 4096 } }, limits: LIMITS });
    expect(result.ok).toBe(false);
    expect(result.error?.message).toMatch(/Array buffer allocation failed|out of memory|memory/i);
  });
});
