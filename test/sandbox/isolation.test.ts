import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxFixture } from "./helpers.js";

const PROBE = `
  const fs = require("node:fs");
  const attempt = (fn) => { try { fn(); return "allowed"; } catch (error) { return error.code || error.message; } };
  module.exports = {
    name: "probe",
    run({ other }) {
      return {
        env: Object.keys(process.env),
        passwd: attempt(() => fs.readFileSync("/etc/passwd", "utf8")),
        other: attempt(() => fs.readFileSync(other, "utf8")),
        own: fs.readFileSync(__dirname + "/data.txt", "utf8"),
        write: attempt(() => fs.writeFileSync(__dirname + "/written.txt", "x")),
        spawn: attempt(() => require("node:child_process").spawn("/bin/sh", ["-c", "true"])),
        exec: attempt(() => require("node:child_process").execSync("true")),
        worker: attempt(() => new (require("node:worker_threads").Worker)("1", { eval: true })),
        signal: attempt(() => process.kill(process.ppid > 0 ? process.ppid : process.pid + 1, 0)),
        group: attempt(() => process.kill(0, 0)),
        debugger: attempt(() => process._debugProcess(process.ppid > 0 ? process.ppid : process.pid + 1)),
        renice: attempt(() => require("node:os").setPriority(process.ppid > 0 ? process.ppid : process.pid + 1, 19)),
        boost: attempt(() => require("node:os").setPriority(-5)),
      };
    },
  };
`;

describe.each([["auto"], ["off"]] as const)("a runner's isolation (bubblewrap %s)", (bubblewrap) => {
  const fixture = new SandboxFixture({ bubblewrap });
  afterAll(() => fixture.close());

  it("reports the isolation applied", () => {
    expect(fixture.sandbox.isolation.permissionModel).toBe(true);
    if (bubblewrap === "off") expect(fixture.sandbox.isolation.bubblewrap).toBe(false);
    // With "auto" it depends on the machine: bwrap present and working. This machine's answer is in the report.
    else if (!existsSync("/usr/bin/bwrap")) expect(fixture.sandbox.isolation.bubblewrap).toBe(false);
  });

  it("has an empty environment, reads only its own bundle, and may not write, spawn, start workers or signal other processes", async () => {
    const otherDir = join(fixture.root, "not-the-bundle");
    mkdirSync(otherDir, { recursive: true });
    const other = join(otherDir, "secret.txt");
    writeFileSync(other, "secret");
    const bundle = fixture.bundle(PROBE, { files: { "data.txt": "mine" } });
    const result = await fixture.invoke(bundle, { call: { kind: "run", event: { other } } });
    expect(result.error).toBeUndefined();
    expect(result.value).toEqual({
      env: [],
      passwd: "ERR_ACCESS_DENIED",
      other: "ERR_ACCESS_DENIED",
      own: "mine",
      write: "ERR_ACCESS_DENIED",
      spawn: "ERR_ACCESS_DENIED",
      exec: "ERR_ACCESS_DENIED",
      worker: "ERR_ACCESS_DENIED",
      signal: "ERR_ACCESS_DENIED",
      group: "ERR_ACCESS_DENIED",
      debugger: "ERR_ACCESS_DENIED",
      renice: "ERR_ACCESS_DENIED",
      boost: "ERR_ACCESS_DENIED",
    });
    expect(existsSync(join(bundle.file, "..", "written.txt"))).toBe(false);
  });

  it("cannot read another bundle's folder", async () => {
    const secret = fixture.bundle(`module.exports = { name: "secret", run() { return 1; } };`, { files: { "key.txt": "another user's key" } });
    const reader = fixture.bundle(`module.exports = { name: "reader", run(e) { return require("node:fs").readFileSync(e.path, "utf8"); } };`, { ownerId: "user_2" });
    const result = await fixture.invoke(reader, { call: { kind: "run", event: { path: join(secret.file, "..", "key.txt") } } });
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: "UserError" });
    expect(result.error?.message).toMatch(/Access to this API has been restricted/);
  });

  it("reaches a loopback service only when the egress allow list opens it", async () => {
    const server = createServer((_request, response) => response.end("pong"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const open = new SandboxFixture({ bubblewrap, network: { mode: "policy", allow: ["127.0.0.1"] } });
    try {
      const { port } = server.address() as AddressInfo;
      const source = `module.exports = { name: "net", async run(e) { try { return await (await fetch(e.url)).text(); } catch (error) { return "refused: " + (error.cause?.message ?? error.message); } } };`;
      const event = { url: `http://127.0.0.1:${port}/` };
      const closed = await fixture.invoke(fixture.bundle(source), { call: { kind: "run", event } });
      expect(closed.value).toMatch(/^refused: Connection to 127\.0\.0\.1:\d+ refused by Runnel's network policy: 127\.0\.0\.1 is loopback/);
      const allowed = await open.invoke(open.bundle(source), { call: { kind: "run", event } });
      expect(allowed.value).toBe("pong");
    } finally {
      server.close();
      await open.close();
    }
  });
});
