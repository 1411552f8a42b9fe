import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBystanderServed, hostileSource, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * The runner's environment holds nothing of the server's. The server runs in
 * this test's process, so canaries put into this process's environment (and a
 * real master key in its configuration) are what a leak would show.
 */
const CANARY = `canary-${randomBytes(8).toString("hex")}`;
const MASTER_KEY = randomBytes(32).toString("hex");
const DATABASE_URL = `postgres://runnel:${CANARY}@127.0.0.1:5432/none`;

/** Reports what the code can see of environments: its own, pid 1's, its parent's and the server's. */
const PROBE = hostileSource(`
      const fs = require("node:fs");
      const read = (path) => { try { return fs.readFileSync(path, "utf8"); } catch (error) { return "denied: " + (error.code || error.message); } };
      const serverPid = Number(event.query.server);
      this.http.respond({ status: 200, body: {
        env: { ...process.env },
        keys: Object.keys(process.env),
        self: read("/proc/self/environ"),
        init: read("/proc/1/environ"),
        parent: read("/proc/" + process.ppid + "/environ"),
        server: read("/proc/" + serverPid + "/environ"),
        serverCmdline: read("/proc/" + serverPid + "/cmdline"),
        argv: process.argv, execArgv: process.execArgv,
      } });`);

let h: HostileHarness;
let savedEnv: NodeJS.ProcessEnv;
beforeAll(async () => {
  savedEnv = { ...process.env };
  Object.assign(process.env, { DATABASE_URL, RUNNEL_MASTER_KEY: MASTER_KEY, RUNNEL_HOSTILE_CANARY: CANARY });
  h = await startHostileHarness({ RUNNEL_MASTER_KEY: MASTER_KEY });
});
afterAll(async () => {
  await h?.close();
  process.env = savedEnv;
});

describe("a component looking for the server's secrets in environments", () => {
  it("finds an empty process.env and no readable environ of itself, pid 1, its parent or the server", async () => {
    const source = await h.deploySource(PROBE);
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source, { query: `?attack&server=${process.pid}` }));
    expect(outcome.status).toBe(200);
    const seen = outcome.body;
    expect(seen.env).toEqual({});
    expect(seen.keys).toEqual([]);
    for (const file of ["self", "init", "parent", "server", "serverCmdline"]) expect(seen[file], file).toMatch(/^denied: (ERR_ACCESS_DENIED|ENOENT|EACCES)$/);
    // Nothing it can see holds a secret: not the canaries, the master key, the database URL or the admin key.
    const everything = JSON.stringify(seen);
    for (const secret of [CANARY, MASTER_KEY, h.server.adminKey, "DATABASE_URL", "RUNNEL_"]) expect(everything).not.toContain(secret);
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("cannot put anything into process.env that a later call or another user sees", async () => {
    const source = await h.deploySource(
      hostileSource(`
      process.env.PATH = "/attacker/bin"; process.env.NODE_OPTIONS = "--require /attacker/evil.js"; process.env.LEAK = "from attacker";
      this.http.respond({ status: 200, body: { set: Object.keys(process.env).sort() } });`),
    );
    const { outcome, bystander } = await h.whileAttacking(() => h.attack(source));
    expect(outcome).toEqual({ status: 200, body: { set: ["LEAK", "NODE_OPTIONS", "PATH"] } });
    expectBystanderServed(bystander);
    // The server's own environment is untouched, and a runner of other code starts with an empty one again.
    expect(process.env.LEAK).toBeUndefined();
    expect(process.env.NODE_OPTIONS).toBe(savedEnv.NODE_OPTIONS);
    const reader = await h.deploySource(hostileSource(`this.http.respond({ status: 200, body: Object.keys(process.env) });`));
    expect(await h.attack(reader)).toEqual({ status: 200, body: [] });
  });
});
