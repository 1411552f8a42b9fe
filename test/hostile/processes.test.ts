import { getPriority } from "node:os";
import inspector from "node:inspector";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBystanderServed, hostileSource, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * Processes: a runner may not start processes, threads or addons, open an
 * inspector, or signal anything but itself. The server runs in this test's
 * process, so `process.pid` here is the pid the attacker aims at. Signals are
 * sent as 0 (a probe) wherever a hole would reach beyond the test: a guard
 * that failed against kill(-1, SIGKILL) would take the machine with it.
 */

/** Runs each attempt (name → JS expression, awaited) and answers what each did. */
function probe(attempts: Record<string, string>): string {
  const lines = Object.entries(attempts).map(([name, expression]) => `      out[${JSON.stringify(name)}] = await attempt(async () => ${expression});`);
  return hostileSource(`
      const cp = require("node:child_process");
      const serverPid = Number(event.query.server);
      const attempt = async (fn) => { try { const value = await fn(); return { allowed: String(value).slice(0, 200) }; } catch (error) { return { denied: error.code || error.message }; } };
      const out = { pid: process.pid };
${lines.join("\n")}
      this.http.respond({ status: 200, body: out });`);
}

let h: HostileHarness;
beforeAll(async () => {
  h = await startHostileHarness();
});
afterAll(() => h?.close());

const fire = (source: Parameters<HostileHarness["fire"]>[0]) => h.whileAttacking(() => h.fire(source, { query: `?attack&server=${process.pid}` }));

describe("a component starting processes, threads and debuggers", () => {
  it("may not spawn, exec or fork, by any of child_process's doors", async () => {
    const source = await h.deploySource(
      probe({
        spawn: `cp.spawn("/bin/sh", ["-c", "id"]).pid`,
        spawnSync: `cp.spawnSync("/bin/sh", ["-c", "id"]).stdout`,
        exec: `new Promise((resolve, reject) => cp.exec("id", (error, out) => (error ? reject(error) : resolve(out))))`,
        execSync: `cp.execSync("id")`,
        execFile: `new Promise((resolve, reject) => cp.execFile("/usr/bin/id", (error, out) => (error ? reject(error) : resolve(out))))`,
        execFileSync: `cp.execFileSync(process.execPath, ["-e", "1"])`,
        fork: `cp.fork(__filename).pid`,
        spawnBinding: `process.binding("spawn_sync")`,
        processWrap: `process.binding("process_wrap")`,
      }),
    );
    const { outcome, bystander } = await fire(source);
    expect(outcome.status).toBe(200);
    const { pid: _pid, ...attempts } = outcome.body;
    for (const [name, result] of Object.entries(attempts)) expect(result, name).toEqual({ denied: "ERR_ACCESS_DENIED" });
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("may not start worker threads or load native addons", async () => {
    const source = await h.deploySource(
      probe({
        worker: `new (require("node:worker_threads").Worker)("1", { eval: true }).threadId`,
        workerFile: `new (require("node:worker_threads").Worker)(__filename).threadId`,
        dlopen: `process.dlopen({ exports: {} }, "/usr/lib/x86_64-linux-gnu/libc.so.6")`,
      }),
    );
    const { outcome, bystander } = await fire(source);
    expect(outcome.status).toBe(200);
    expect(outcome.body.worker).toEqual({ denied: "ERR_ACCESS_DENIED" });
    expect(outcome.body.workerFile).toEqual({ denied: "ERR_ACCESS_DENIED" });
    expect(outcome.body.dlopen).toEqual({ denied: "ERR_DLOPEN_DISABLED" });
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("opens no inspector, in its runner or in the server", async () => {
    const source = await h.deploySource(
      probe({
        open: `require("node:inspector").open(0)`,
        session: `new (require("node:inspector").Session)().connect()`,
        // SIGUSR1, the signal that opens an inspector: not through process.kill, so aimed at the server and at the runner's parent.
        debugServer: `process._debugProcess(serverPid)`,
        debugParent: `process.ppid > 0 ? process._debugProcess(process.ppid) : "no parent in its namespace"`,
        debugSelf: `process._debugProcess(process.pid)`,
        afterwardsUrl: `new Promise((resolve) => setTimeout(() => resolve(require("node:inspector").url()), 200))`,
      }),
    );
    const { outcome, bystander } = await fire(source);
    expect(outcome.status).toBe(200);
    expect(outcome.body.open).toEqual({ denied: "ERR_ACCESS_DENIED" });
    expect(outcome.body.session).toEqual({ denied: "ERR_ACCESS_DENIED" });
    // Its own SIGUSR1 goes through, and the permission model keeps the inspector shut.
    expect(outcome.body.afterwardsUrl).toEqual({ allowed: "undefined" });
    // The server opened none: no debugger can attach to it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inspector.url()).toBeUndefined();
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("signals only itself: not the server, pid 1, its group or every process", async () => {
    const priorityBefore = getPriority(process.pid);
    const source = await h.deploySource(
      probe({
        server: `process.kill(serverPid, 0)`,
        serverTerm: `process.kill(serverPid, "SIGTERM")`,
        init: `process.kill(1, 0)`,
        group: `process.kill(0, 0)`,
        everyone: `process.kill(-1, 0)`,
        parent: `process.kill(process.ppid, 0)`,
        rawKill: `process._kill(serverPid, 0)`,
        renice: `require("node:os").setPriority(serverPid, 19)`,
        // A higher priority than the server's, to starve it of CPU.
        boost: `require("node:os").setPriority(0, -20)`,
        self: `process.kill(process.pid, 0)`,
      }),
    );
    const { outcome, bystander } = await fire(source);
    expect(outcome.status).toBe(200);
    const { pid, self, init, renice, boost, ...others } = outcome.body;
    expect(self).toEqual({ allowed: "true" });
    // Under bubblewrap the runner is pid 1 of its own namespace: "pid 1" is itself.
    expect(init).toEqual(pid === 1 ? { allowed: "true" } : { denied: "ERR_ACCESS_DENIED" });
    for (const [name, result] of Object.entries(others)) expect(result, name).toEqual({ denied: "ERR_ACCESS_DENIED" });
    // Without its pid in the runner's namespace, setPriority finds no such process; with it, a runner without privileges may not renice another user's.
    expect(renice.denied).toMatch(/ESRCH|EPERM|EACCES|ERR_ACCESS_DENIED|ERR_SYSTEM_ERROR/);
    expect(getPriority(process.pid)).toBe(priorityBefore);
    // Raising its own priority is refused by the runner, and would need a capability the runner does not have.
    expect(boost.denied).toMatch(/ERR_ACCESS_DENIED|EACCES|EPERM|ERR_SYSTEM_ERROR/);
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("cannot multiply: a fork bomb is a loop of refusals", async () => {
    const source = await h.deploySource(
      hostileSource(`
      const cp = require("node:child_process");
      const { Worker } = require("node:worker_threads");
      const refusals = {};
      for (let i = 0; i < 500; i++) {
        for (const start of [() => cp.spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true }), () => cp.fork(__filename), () => new Worker(__filename)]) {
          try { start(); refusals.started = (refusals.started || 0) + 1; } catch (error) { refusals[error.code] = (refusals[error.code] || 0) + 1; }
        }
      }
      this.http.respond({ status: 200, body: refusals });`),
    );
    const { outcome, bystander } = await h.whileAttacking(() => h.attack(source));
    expect(outcome).toEqual({ status: 200, body: { ERR_ACCESS_DENIED: 1500 } });
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });
});
