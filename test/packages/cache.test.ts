import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureRegistry } from "../../src/bench/fixture-registry.js";
import { closedPort, deployAndRun, emitting, runSource, startNpmFixture } from "../helpers/npm-registry.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

const THREE = `import leftpad from "leftpad@^1"; import withDep from "with-dep"; import sub from "@fixture/scoped@^1/sub";`;
const EXPRESSION = "{ leftpad: leftpad.version, its: withDep.leftpadVersion, sub }";

describe("the package lock and the package cache", () => {
  let registry: FixtureRegistry;
  let server: TestServer;
  let dataDir: string;

  beforeAll(async () => {
    registry = await startNpmFixture("/nonexistent/marker");
    server = await startTestServer({ RUNNEL_NPM_REGISTRY: registry.url }, { keepData: true });
    dataDir = server.dataDir;
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
  });

  const snapshot = () => new Map(registry.requests);
  const newSince = (before: Map<string, number>) =>
    [...registry.requests].filter(([path, count]) => count > (before.get(path) ?? 0)).map(([path]) => path).sort();

  it("installs once, and redeploying the same code asks the registry nothing", async () => {
    const first = await deployAndRun(server, emitting(THREE, EXPRESSION), { filename: "three.mjs" });
    expect(first.event).toEqual({ leftpad: "1.2.3", its: "1.2.3", sub: "sub of 1.5.0" });
    expect(registry.tarballRequests()).toBe(3);
    const installed = (await readdir(join(dataDir, "packages"))).filter((name) => !name.startsWith("."));
    expect(installed).toHaveLength(3);

    const before = snapshot();
    const again = await deployAndRun(server, emitting(THREE, EXPRESSION), { filename: "three.mjs" });
    expect(again.event).toEqual(first.event);
    expect(again.source.component_id).toBe(first.source.component_id);
    expect(newSince(before)).toEqual([]);
  });

  it("new code with the same packages resolves versions but downloads nothing", async () => {
    const before = snapshot();
    const other = await deployAndRun(server, emitting(THREE, `{ ...${EXPRESSION}, other: true }`), { filename: "three.mjs" });
    expect(other.event).toMatchObject({ leftpad: "1.2.3", other: true });
    expect(newSince(before)).toEqual(["/@fixture/scoped", "/leftpad", "/with-dep"]);
  });

  it("an update re-resolves only the imports that changed", async () => {
    const { source } = await deployAndRun(server, emitting(THREE, EXPRESSION, "Updated later"), { filename: "three.mjs" });
    const before = snapshot();
    const changed = THREE.replace(`"leftpad@^1"`, `"leftpad@2.0.0"`);
    const updated = await call(server.url, "PUT", `/v1/sources/${source.id}`, { key: server.adminKey, json: { component_code: emitting(changed, EXPRESSION, "Updated later"), filename: "three.mjs" } });
    expect(updated.status).toBe(200);
    expect((await runSource(server, source.id)).events[0].event).toEqual({ leftpad: "2.0.0", its: "1.2.3", sub: "sub of 1.5.0" });
    expect(newSince(before)).toEqual(["/leftpad", "/leftpad/-/leftpad-2.0.0.tgz"]);
  });

  it("concurrent deploys of new packages download each tarball once", async () => {
    const code = (n: number) => emitting(`import value from "has-install-script"; import greet from "esm-only";`, `{ value, greeting: greet("${n}") }`);
    const results = await Promise.all([1, 2, 3].map((n) => deployAndRun(server, code(n), { filename: "c.mjs" })));
    expect(results.map((result) => result.event.greeting)).toEqual(["HELLO 1", "HELLO 2", "HELLO 3"]);
    expect(registry.requests.get("/esm-only/-/esm-only-1.0.0.tgz")).toBe(1);
    expect(registry.requests.get("/has-install-script/-/has-install-script-1.0.0.tgz")).toBe(1);
  });

  it("a new server on a warm cache downloads nothing, and the same code deploys with the registry down", async () => {
    await server.close();
    server = await startTestServer({ RUNNEL_NPM_REGISTRY: registry.url }, { dataDir, keepData: true });
    const tarballs = registry.tarballRequests();
    const warm = await deployAndRun(server, emitting(THREE, `{ ...${EXPRESSION}, warm: true }`), { filename: "three.mjs" });
    expect(warm.event).toMatchObject({ leftpad: "1.2.3", warm: true });
    expect(registry.tarballRequests()).toBe(tarballs);

    await server.close();
    server = await startTestServer({ RUNNEL_NPM_REGISTRY: `http://127.0.0.1:${await closedPort()}` }, { dataDir });
    const offline = await deployAndRun(server, emitting(THREE, `{ ...${EXPRESSION}, warm: true }`), { filename: "three.mjs" });
    expect(offline.event).toEqual(warm.event);
  });
});
