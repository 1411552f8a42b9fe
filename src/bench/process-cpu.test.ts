import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { threadSchedule, threadWakeUps, withThreadSchedule } from "./process-cpu.js";

/** Past Linux's largest process id (2^22): no such thread. */
const NO_SUCH_THREAD = 2 ** 22 + 7;

describe("withThreadSchedule", () => {
  it("accounts a thread that computes as running or waiting for a CPU, all the time, and one that sleeps as neither", async () => {
    // Linux keeps the account in every kernel this runs on (schedstat); elsewhere the bench leaves it out.
    expect(threadSchedule(process.pid)).toBeDefined();
    const busy = await withThreadSchedule(process.pid, async () => {
      const until = performance.now() + 300;
      while (performance.now() < until);
      return { kind: "busy" };
    });
    // However loaded the machine, a loop that never yields is on a CPU or in the run queue: the two add up to its time.
    expect(busy.kind).toBe("busy");
    expect(busy.mainThread!.ran + busy.mainThread!.waited).toBeGreaterThan(0.85);
    // A sleeping thread of a process of its own: this test's process may run other files' leftovers meanwhile.
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000); process.stdout.write('ready')"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      // Started (node's own start-up is work), then a moment for what it does after its script.
      await new Promise((resolve) => sleeper.stdout!.once("data", resolve));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const idle = await withThreadSchedule(sleeper.pid!, () => new Promise<{ kind: string }>((resolve) => setTimeout(() => resolve({ kind: "idle" }), 300)));
      expect(idle.mainThread!.ran + idle.mainThread!.waited).toBeLessThan(0.5);
    } finally {
      sleeper.kill();
    }
  });

  it("counts the times a thread slept and was woken: each timer it waited for, and none for a loop that never yields", async () => {
    expect(threadWakeUps(process.pid)).toBeGreaterThanOrEqual(0);
    const sleeper = await withThreadSchedule(process.pid, async () => {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      return { kind: "sleeper" };
    });
    // Twenty waits on an idle event loop: the thread slept in epoll for each, and something may have woken it more.
    expect(sleeper.mainThread!.wokeUp).toBeGreaterThanOrEqual(20);
    const busy = await withThreadSchedule(process.pid, async () => {
      const until = performance.now() + 100;
      while (performance.now() < until);
      return { kind: "busy" };
    });
    // A preempted thread is switched out involuntarily: it never went to sleep.
    expect(busy.mainThread!.wokeUp).toBeLessThanOrEqual(2);
    expect(threadWakeUps(process.pid, NO_SUCH_THREAD)).toBeUndefined();
  });

  it("leaves the account out for a thread that does not exist", async () => {
    expect(threadSchedule(process.pid, NO_SUCH_THREAD)).toBeUndefined();
    const figures = await withThreadSchedule(NO_SUCH_THREAD, async () => ({ perSecond: 1 }));
    expect(figures).toEqual({ perSecond: 1 });
  });
});
