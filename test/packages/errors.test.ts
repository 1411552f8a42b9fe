import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureRegistry } from "../../src/bench/fixture-registry.js";
import { closedPort, deployAndRun, emitting, runSource, startNpmFixture } from "../helpers/npm-registry.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

describe("package errors", () => {
  let registry: FixtureRegistry;
  let server: TestServer;

  beforeAll(async () => {
    registry = await startNpmFixture("/nonexistent/marker");
    server = await startTestServer({ RUNNEL_NPM_REGISTRY: registry.url });
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
  });

  const save = (code: string) => call(server.url, "POST", "/v1/components", { key: server.adminKey, json: { component_code: code, filename: "c.mjs" } });

  it.each([
    ["conflicting pins", `import a from "leftpad@1.0.0"; import b from "leftpad@^2";`, /"leftpad" is imported with two different versions: "leftpad@1.0.0" and "leftpad@\^2"/, { package: "leftpad" }],
    ["an unknown package", `import x from "no-such-package";`, new RegExp(`The package "no-such-package" \\(imported as "no-such-package"\\) does not exist in the registry http://127\\.0\\.0\\.1`), { package: "no-such-package" }],
    ["an unknown version", `import x from "leftpad@^3";`, /No version of "leftpad" matches "\^3" \(imported as "leftpad@\^3"\)\. The latest is 2\.0\.0; published: 1\.0\.0, 1\.1\.0, 1\.1\.4, 1\.2\.3, 2\.0\.0/, { package: "leftpad", range: "^3" }],
    ["a malformed pin", `import x from "leftpad@^^1";`, /"\^\^1" in "leftpad@\^\^1" is not a version, a range/, { import: "leftpad@^^1" }],
    ["a package that imports files outside itself", `import x from "reaches-out";`, /reaches-out@1\.0\.0 imports "\.\.\/\.\.\/\.\.\/\.\.\/outside\.json", which is outside the package/, {}],
  ])("refuses %s with a 400 naming the package", async (_case, head, message, details) => {
    const response = await save(emitting(head, "{}"));
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("ValidationError");
    expect(response.body.error.message).toMatch(message);
    expect(response.body.error.details).toMatchObject({ field: "component_code", ...details });
  });

  it("keeps a source running its deployed code when an update names a version that does not exist", async () => {
    const { source, event } = await deployAndRun(server, emitting(`import leftpad from "leftpad@1.0.0";`, "{ version: leftpad.version }"), { filename: "c.mjs" });
    expect(event).toEqual({ version: "1.0.0" });
    const update = await call(server.url, "PUT", `/v1/sources/${source.id}`, {
      key: server.adminKey,
      json: { component_code: emitting(`import leftpad from "leftpad@9.9.9";`, "{ version: leftpad.version }"), filename: "c.mjs" },
    });
    expect(update.status).toBe(400);
    expect((await runSource(server, source.id)).events[0].event).toEqual({ version: "1.0.0" });
  });

  describe("with the registry unreachable", () => {
    let offline: TestServer;
    let registryUrl: string;
    beforeAll(async () => {
      registryUrl = `http://127.0.0.1:${await closedPort()}/`;
      offline = await startTestServer({ RUNNEL_NPM_REGISTRY: registryUrl });
    });
    afterAll(() => offline?.close());

    it("answers 502 naming the package and the registry, and the deployed source keeps its code", async () => {
      const { source, event } = await deployAndRun(offline, emitting("", "{ version: 'no packages' }"), { filename: "c.mjs" });
      expect(event).toEqual({ version: "no packages" });
      const update = await call(offline.url, "PUT", `/v1/sources/${source.id}`, {
        key: offline.adminKey,
        json: { component_code: emitting(`import leftpad from "leftpad";`, "{ version: leftpad.version }"), filename: "c.mjs" },
      });
      expect(update.status).toBe(502);
      expect(update.body.error.code).toBe("RegistryUnavailable");
      expect(update.body.error.message).toContain(`Could not get "leftpad" from the package registry ${registryUrl}: ECONNREFUSED`);
      expect(update.body.error.details).toEqual({ package: "leftpad", registry: registryUrl });
      expect((await runSource(offline, source.id)).events[0].event).toEqual({ version: "no packages" });
    });
  });
});
