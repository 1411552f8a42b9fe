import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureRegistry } from "../../src/bench/fixture-registry.js";
import { bundleComponent } from "../../src/components/bundle.js";
import { deployAndRun, emitting, startNpmFixture } from "../helpers/npm-registry.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

describe("packages imported by components, from a registry, with no install step", () => {
  let registry: FixtureRegistry;
  let server: TestServer;
  let scratch: string;
  let marker: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "runnel-pins-"));
    marker = join(scratch, "install-script-ran");
    registry = await startNpmFixture(marker);
    server = await startTestServer({ RUNNEL_NPM_REGISTRY: registry.url });
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it.each([
    ["no version: the latest", "leftpad", "2.0.0"],
    ["an exact version", "leftpad@1.1.0", "1.1.0"],
    ["a caret range", "leftpad@^1.0.0", "1.2.3"],
    ["a tilde range", "leftpad@~1.1.0", "1.1.4"],
    ["a dist-tag", "leftpad@latest", "2.0.0"],
  ])("bundles %s (%s → %s)", async (_case, specifier, version) => {
    const { event } = await deployAndRun(server, emitting(`import leftpad from "${specifier}";`, "{ version: leftpad.version, padded: leftpad('7', 3, '0') }"), { filename: "probe.mjs" });
    expect(event).toEqual({ version, padded: "007" });
  });

  it("bundles subpaths of scoped packages, pinned and not", async () => {
    const { event } = await deployAndRun(
      server,
      emitting(`import sub from "@fixture/scoped@^1/sub"; import { version } from "@fixture/scoped@^1";`, "{ sub, version }"),
      { filename: "probe.mjs" },
    );
    expect(event).toEqual({ sub: "sub of 1.5.0", version: "1.5.0" });
    const latest = await deployAndRun(server, emitting(`import sub from "@fixture/scoped/sub";`, "{ sub }"), { filename: "probe.mjs" });
    expect(latest.event).toEqual({ sub: "sub of 2.0.0" });
  });

  it("gives each package its own dependencies: with-dep gets leftpad ^1 while the component has the latest", async () => {
    const { event } = await deployAndRun(
      server,
      emitting(`import leftpad from "leftpad"; import withDep from "with-dep";`, "{ mine: leftpad.version, its: withDep.leftpadVersion, stars: withDep.stars('ab') }"),
      { filename: "probe.mjs" },
    );
    expect(event).toEqual({ mine: "2.0.0", its: "1.2.3", stars: "***ab" });
  });

  it("bundles an ES module package (exports map, subpath) into ES module and CommonJS components", async () => {
    const esm = await deployAndRun(server, emitting(`import greet, { kind } from "esm-only"; import { extra } from "esm-only/extra";`, "{ kind, extra, greeting: greet('you') }"), { filename: "probe.mjs" });
    expect(esm.event).toEqual({ kind: "esm", extra: "extra from esm-only", greeting: "HELLO YOU" });
    const cjs = await deployAndRun(
      server,
      `const { kind } = require("esm-only"); const leftpad = require("leftpad@1.0.0");\nmodule.exports = { name: "CJS importer", version: "1", async run() { this.$emit({ kind, version: leftpad.version, later: (await import("@fixture/scoped@1.0.0/sub")).default }); } };`,
    );
    expect(cjs.event).toEqual({ kind: "esm", version: "1.0.0", later: "sub of 1.0.0" });
  });

  it("bundles packages into a TypeScript component", async () => {
    const code = `import leftpad from "leftpad@^1";\nimport { defineSource } from "@pipedream/types";\nconst pad = (n: number): string => leftpad(String(n), 4, "0");\nexport default defineSource({ name: "TS importer", version: "1", async run() { this.$emit({ version: leftpad.version as string, padded: pad(42) }); } });`;
    const { event } = await deployAndRun(server, code, { filename: "probe.ts" });
    expect(event).toEqual({ version: "1.2.3", padded: "0042" });
  });

  it("bundles packages that an app file imports, from the code the CLI sends", async () => {
    const dir = join(scratch, "app");
    await mkdir(join(dir, "sources"), { recursive: true });
    await writeFile(join(dir, "pad.app.mjs"), `import leftpad from "leftpad@~1.1.0";\nexport default { type: "app", app: "pad", methods: { pad(text) { return leftpad(text, 4, "."); }, version() { return leftpad.version; } } };`);
    await writeFile(join(dir, "sources", "padded.mjs"), `import pad from "../pad.app.mjs";\nexport default { name: "Padded", version: "1", props: { pad }, async run() { this.$emit({ text: this.pad.pad("x"), version: this.pad.version() }); } };`);
    const local = await bundleComponent({ kind: "file", path: join(dir, "sources", "padded.mjs") });
    expect(local.imports).toEqual(["leftpad@~1.1.0"]);
    const { event } = await deployAndRun(server, local.code, { filename: "padded.mjs" });
    expect(event).toEqual({ text: "...x", version: "1.1.4" });
  });

  it("installs a package without running its install scripts", async () => {
    const { event } = await deployAndRun(server, emitting(`import value from "has-install-script";`, "{ value }"), { filename: "probe.mjs" });
    expect(event).toEqual({ value: "installed without running scripts" });
    expect(existsSync(marker)).toBe(false);
  });

  it("fails a run that requires a package by a computed name, saying why", async () => {
    const code = `module.exports = { name: "Dynamic", version: "1", async run() { const name = ["left", "pad"].join(""); this.$emit({ v: require(name).version }); } };`;
    const { run } = await deployAndRun(server, code);
    expect(run.ok).toBe(false);
    expect(run.error.message).toMatch(/Cannot find package "leftpad": .*dynamic requires of packages are not supported.*static string/);
  });
});
