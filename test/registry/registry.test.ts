import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource } from "../helpers/sources.js";

/** An ES module action, as `runnel init action` writes one. */
const action = (over: { key?: string | null; version?: string | null; shout?: string } = {}) => {
  const key = over.key === null ? "" : `key: ${JSON.stringify(over.key ?? "demo-shout")},`;
  const version = over.version === null ? "" : `version: ${JSON.stringify(over.version ?? "1.9.0")},`;
  return `export default defineComponent({
  ${key}
  name: "Shout",
  ${version}
  type: "action",
  props: { text: { type: "string", label: "Text" } },
  async run({ $ }) { return this.text.toUpperCase() + ${JSON.stringify(over.shout ?? "!")}; },
});
`;
};

const SOURCE = (version: string) => `export default defineComponent({
  key: "demo-ticker",
  name: "Ticker",
  version: ${JSON.stringify(version)},
  props: { label: { type: "string" } },
  async run(event) { this.$emit({ label: this.label, version: ${JSON.stringify(version)} }, { summary: "tick" }); },
});
`;

describe("the component registry through a real server", () => {
  let server: TestServer;
  let ada: { id: string; key: string };
  let bob: { id: string; key: string };
  const publish = (key: string, code: string, filename = "shout.mjs") =>
    call(server.url, "POST", "/v1/components/registry", { key, json: { component_code: code, filename } });
  const get = (key: string, path: string) => call(server.url, "GET", `/v1/components/registry${path}`, { key });

  beforeAll(async () => {
    server = await startTestServer();
    ada = await createUser(server, "ada");
    bob = await createUser(server, "bob");
  });
  afterAll(() => server?.close());

  it("is searched by words at GET /v1/components/search (the hosted API's registry search), not taken for a component named search", async () => {
    const searcher = await createUser(server, "searcher");
    expect((await publish(searcher.key, action({ key: "demo-shout-loudly", version: "1.0.0" }))).status).toBe(201);
    expect((await publish(searcher.key, SOURCE("1.0.0"), "ticker.mjs")).status).toBe(201);
    const found = await call(server.url, "GET", "/v1/components/search?query=shout%20loudly&similarity_threshold=0.5", { key: searcher.key });
    expect(found).toMatchObject({ status: 200, body: { sources: [], actions: ["demo-shout-loudly"] } });
    expect((await call(server.url, "GET", "/v1/components/search?query=ticker&app=demo", { key: searcher.key })).body).toEqual({ sources: ["demo-ticker"], actions: [] });
    // Another user's registry is not searched.
    expect((await call(server.url, "GET", "/v1/components/search?query=shout", { key: bob.key })).body.actions).not.toContain("demo-shout-loudly");
    expect((await call(server.url, "GET", "/v1/components/search", { key: searcher.key })).body.error.details.field).toBe("query");
  });

  it("publishes an action (201) and gets it by key with the component's view", async () => {
    const published = await publish(ada.key, action());
    expect(published.status).toBe(201);
    expect(published.body.data).toMatchObject({
      key: "demo-shout",
      version: "1.9.0",
      kind: "action",
      component: { key: "demo-shout", version: "1.9.0", type: "action", name: "Shout" },
    });
    expect(published.body.data.component.id).toMatch(/^sc_/);
    expect(published.body.data.published_at).toBeGreaterThan(1_600_000_000);
    expect(published.body.data.published_at).toBeLessThan(10_000_000_000); // seconds, not milliseconds

    const got = await get(ada.key, "/demo-shout");
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(published.body.data);
    // The component view is the one GET /v1/components/<id> gives.
    const byId = await call(server.url, "GET", `/v1/components/${published.body.data.component.id}`, { key: ada.key });
    expect(got.body.data.component).toEqual(byId.body.data);
  });

  it("resolves a key to the highest semantic version, and ?version= to an exact one", async () => {
    const newer = await publish(ada.key, action({ version: "1.10.0" }));
    expect(newer.status).toBe(201);
    const newest = await get(ada.key, "/demo-shout");
    expect(newest.body.data).toMatchObject({ version: "1.10.0", component: { id: newer.body.data.component.id } });

    const older = await get(ada.key, "/demo-shout?version=1.9.0");
    expect(older.status).toBe(200);
    expect(older.body.data.version).toBe("1.9.0");
    expect(older.body.data.component.id).not.toBe(newer.body.data.component.id);

    const missing = await get(ada.key, "/demo-shout?version=3.0.0");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("NotFound");

    // The listing has one item per key: its newest version, and every version newest first.
    const listed = await get(ada.key, "?namespace=user");
    expect(listed.status).toBe(200);
    const shout = listed.body.data.find((entry: any) => entry.key === "demo-shout");
    expect(shout).toMatchObject({ version: "1.10.0", type: "action", namespace: "user", name: "Shout" });
    expect(shout.versions.map((entry: any) => entry.version)).toEqual(["1.10.0", "1.9.0"]);
  });

  it("is idempotent for the same version with the same code (200), and refuses other code (409)", async () => {
    const first = await get(ada.key, "/demo-shout?version=1.9.0");
    const again = await publish(ada.key, action());
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    // The same code from a file of another name is still the same version.
    const renamed = await publish(ada.key, action(), "renamed.js");
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.version).toBe("1.9.0");

    const changed = await publish(ada.key, action({ shout: "!!!" }));
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe("Conflict");
    expect(changed.body.error.message).toContain("demo-shout@1.9.0 is published already");
    expect(changed.body.error.message).toContain("Bump the version");
    // Nothing changed: the version still holds its first code.
    expect((await get(ada.key, "/demo-shout?version=1.9.0")).body.data).toEqual(first.body.data);
  });

  it.each([
    ["no key", action({ key: null }), "key"],
    ["a key with a stray underscore (one inside a word, as in helper_functions, is fine)", action({ key: "demo-_shout" }), "key"],
    ["a key with capitals", action({ key: "Demo-Shout" }), "key"],
    ["no version", action({ version: null }), "version"],
    ["a version that is not semantic", action({ version: "1.0" }), "version"],
    ["a v-prefixed version", action({ version: "v1.0.0" }), "version"],
  ])("refuses %s with a 400 naming %s", async (_title, code, field) => {
    const refused = await publish(ada.key, code);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("ValidationError");
    expect(refused.body.error.details.field).toBe(field);
  });

  it("keeps each user's registry to that user: another user's key is not found, and theirs may reuse it", async () => {
    const hidden = await get(bob.key, "/demo-shout");
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.message).not.toContain(ada.id);
    expect((await get(bob.key, "/demo-shout?version=1.9.0")).status).toBe(404);
    expect((await get(bob.key, "?namespace=user")).body.data).toEqual([]);

    const own = await publish(bob.key, action({ shout: "?" }));
    expect(own.status).toBe(201);
    expect((await get(bob.key, "/demo-shout")).body.data.version).toBe("1.9.0");
    expect((await get(ada.key, "/demo-shout")).body.data.version).toBe("1.10.0");
  });

  it("publishes a source and deploys it by key through POST /v1/sources: the newest published version, before newer saved code", async () => {
    expect((await publish(ada.key, SOURCE("1.0.0"), "ticker.mjs")).status).toBe(201);
    const published = await publish(ada.key, SOURCE("1.1.0"), "ticker.mjs");
    expect(published.body.data).toMatchObject({ kind: "source", version: "1.1.0" });
    // Saved, not published: a plain key lookup would find this one (the newest saved with the key).
    const draft = await call(server.url, "POST", "/v1/components", { key: ada.key, json: { component_code: SOURCE("2.0.0-draft"), filename: "ticker.mjs" } });
    expect(draft.status).toBe(200);

    const source = await deploySource(server, ada.key, { key: "demo-ticker", configured_props: { label: "from the registry" } });
    expect(source.component_id).toBe(published.body.data.component.id);
    const run = await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: ada.key, json: {} });
    expect(run.body.data.events[0].event).toEqual({ label: "from the registry", version: "1.1.0" });

    // Another user cannot deploy it by key.
    const refused = await call(server.url, "POST", "/v1/sources", { key: bob.key, json: { key: "demo-ticker", configured_props: { label: "x" } } });
    expect(refused.status).toBe(404);
  });

  it("does not take over GET /v1/components/<key> for saved components", async () => {
    const byKey = await call(server.url, "GET", "/v1/components/demo-shout", { key: ada.key });
    expect(byKey.status).toBe(200);
    expect(byKey.body.data.key).toBe("demo-shout");
  });

  describe("runnel publish", () => {
    let dir: string;
    let env: Record<string, string>;
    const cli = (...args: string[]) => runCli(args, { env, cwd: dir });

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "runnel-cli-publish-"));
      env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: ada.key, HOME: dir, XDG_CONFIG_HOME: dir };
      await mkdir(join(dir, "actions", "greet"), { recursive: true });
      await writeFile(join(dir, "actions", "common.mjs"), `export const greeting = (name) => "hello " + name;\n`);
      await writeFile(join(dir, "actions", "greet", "greet.mjs"), greetAction("1.0.0"));
      await writeFile(join(dir, "ticker.mjs"), SOURCE("1.0.0").replace("demo-ticker", "cli-ticker"));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it("publishes a file with its relative imports and prints key@version", async () => {
      const result = await cli("publish", join("actions", "greet", "greet.mjs"));
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe("Published cli-greet@1.0.0 (action)");
      const got = await get(ada.key, "/cli-greet");
      expect(got.body.data).toMatchObject({ key: "cli-greet", version: "1.0.0", kind: "action" });
      // The helper travelled inside the code the server saw.
      expect(got.body.data.component.code).toContain("hello ");
    });

    it("prints JSON with --json, and the same again is no change", async () => {
      const result = await cli("publish", join("actions", "greet", "greet.mjs"), "--json");
      expect(result.code).toBe(0);
      const printed = JSON.parse(result.stdout);
      expect(printed).toEqual((await get(ada.key, "/cli-greet")).body.data);
    });

    it("prints the server's message and exits non-zero when the server refuses", async () => {
      await writeFile(join(dir, "actions", "greet", "greet.mjs"), greetAction("1.0.0", "changed"));
      const conflict = await cli("publish", join("actions", "greet", "greet.mjs"));
      expect(conflict.code).not.toBe(0);
      expect(conflict.stdout).toBe("");
      expect(conflict.stderr).toContain("Error (Conflict): cli-greet@1.0.0 is published already with other code");

      await writeFile(join(dir, "actions", "greet", "greet.mjs"), greetAction("next"));
      const invalid = await cli("publish", join("actions", "greet", "greet.mjs"));
      expect(invalid.code).not.toBe(0);
      expect(invalid.stderr).toContain("Error (ValidationError): A published component's version must be a semantic version");

      const missing = await cli("publish", "nowhere.mjs");
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain("No such file: nowhere.mjs");
    });

    it("publishes a source that `runnel deploy <key>` then deploys from the registry", async () => {
      const published = await cli("publish", "ticker.mjs");
      // Newer code saved with the same key but not published: deploy still takes the published version.
      const draft = SOURCE("2.0.0-draft").replace("demo-ticker", "cli-ticker");
      expect((await call(server.url, "POST", "/v1/components", { key: ada.key, json: { component_code: draft, filename: "ticker.mjs" } })).status).toBe(200);
      expect(published.stdout.trim()).toBe("Published cli-ticker@1.0.0 (source)");
      const deployed = await cli("deploy", "cli-ticker", "--prop", "label=cli", "--json");
      expect(deployed.code).toBe(0);
      const source = JSON.parse(deployed.stdout);
      expect(source.component_id).toBe((await get(ada.key, "/cli-ticker")).body.data.component.id);
      expect(source.configured_props).toEqual({ label: "cli" });
    });
  });
});

function greetAction(version: string, suffix = "") {
  return `import { greeting } from "../common.mjs";

export default defineComponent({
  key: "cli-greet",
  name: "Greet",
  version: ${JSON.stringify(version)},
  type: "action",
  props: { name: { type: "string" } },
  async run({ $ }) { return greeting(this.name) + ${JSON.stringify(suffix)}; },
});
`;
}
