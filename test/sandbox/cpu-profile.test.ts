import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxFixture } from "./helpers.js";

const BUSY = `
  const fs = require("node:fs");
  const attempt = (fn) => { try { fn(); return "allowed"; } catch (error) { return error.code || error.message; } };
  module.exports = {
    name: "busy",
    run({ profiles }) {
      let total = 0;
      for (let i = 0; i < 2e6; i++) total += Math.sqrt(i);
      return { total, writeOwn: attempt(() => fs.writeFileSync(__dirname + "/written.txt", "x")), writeBeside: attempt(() => fs.writeFileSync(profiles + "-escaped.txt", "x")) };
    },
  };
`;

describe.each([["auto"], ["off"]] as const)("the profiling mode (bubblewrap %s)", (bubblewrap) => {
  const dir = mkdtempSync(join(tmpdir(), "runnel-cpu-prof-"));
  const fixture = new SandboxFixture({ bubblewrap, cpuProfiling: { dir } });
  afterAll(async () => {
    await fixture.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}-escaped.txt`, { force: true });
  });

  it("writes each runner's V8 CPU profile into the folder when the runner exits, and says the permission model is off", async () => {
    expect(fixture.sandbox.isolation.permissionModel).toBe(false);
    const result = await fixture.invoke(fixture.bundle(BUSY), { call: { kind: "run", event: { profiles: dir } } });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    if (fixture.sandbox.isolation.bubblewrap) {
      // Bubblewrap's view stays read-only outside the profiles' folder; what is written beside it lands in the sandbox's own /tmp.
      expect((result.value as { writeOwn: string }).writeOwn).toBe("EROFS");
      expect(existsSync(`${dir}-escaped.txt`)).toBe(false);
    }
    expect(readdirSync(dir)).toEqual([]);
    await fixture.sandbox.close();
    const profiles = readdirSync(dir).filter((name) => /^runner-\d{8}T\d{6}-[0-9a-f]{8}\.cpuprofile$/.test(name));
    // The runner that ran the call, and the spare started beside it.
    expect(profiles.length).toBeGreaterThanOrEqual(1);
    const parsed = profiles.map((name) => JSON.parse(readFileSync(join(dir, name), "utf8")) as { nodes: Array<{ callFrame: { url: string } }>; samples: number[] });
    for (const profile of parsed) expect(profile.samples.length).toBeGreaterThan(0);
    // The component's own code is in one of them.
    expect(parsed.some((profile) => profile.nodes.some((node) => node.callFrame.url.endsWith("component.js")))).toBe(true);
  });
});

describe("without the profiling mode", () => {
  const fixture = new SandboxFixture({ cpuProfiling: null });
  afterAll(() => fixture.close());

  it("keeps the permission model: the component cannot write, not even where profiles would go", async () => {
    expect(fixture.sandbox.isolation.permissionModel).toBe(true);
    const result = await fixture.invoke(fixture.bundle(BUSY), { call: { kind: "run", event: { profiles: tmpdir() } } });
    const value = result.value as { writeOwn: string };
    expect(["ERR_ACCESS_DENIED", "EROFS"]).toContain(value.writeOwn);
  });
});
