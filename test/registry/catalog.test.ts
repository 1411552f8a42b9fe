import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/catalog/load-catalog.js";
import { RegistryService } from "../../src/engine/registry-service.js";
import { openStore } from "../../src/store/open-store.js";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventually, eventsOf } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/** A catalog of this test's own (test/registry/fixtures/catalog), published as start-up publishes catalog/. */
const FIXTURE_CATALOG = resolve(import.meta.dirname, "fixtures", "catalog");

describe("Runnel's catalog in the registry", () => {
  let server: TestServer;
  let ada: { id: string; key: string };
  let bob: { id: string; key: string };
  const list = (key: string, query = "") => call(server.url, "GET", `/v1/components/registry${query}`, { key });

  beforeAll(async () => {
    server = await startTestServer();
    // What start-up does with catalog/, with the fixture folder: the same two calls.
    const published = await server.server.engine.registry.publishCatalog(await loadCatalog(FIXTURE_CATALOG));
    expect(published.added.sort()).toEqual(["fixture_demo-add-numbers@0.2.0", "fixture_demo-new-pings@0.1.0"]);
    ada = await createUser(server, "ada");
    bob = await createUser(server, "bob");
  });
  afterAll(() => server?.close());

  it("is published at start-up from catalog/: every built component is listed to every user", async () => {
    const real = await loadCatalog();
    expect(real.failures).toEqual([]);
    expect(real.components.length).toBeGreaterThan(0);
    const keys = (await call(server.url, "GET", "/v1/components/registry?namespace=catalog&limit=100", { key: bob.key })).body.data.map((item: any) => item.key);
    for (const component of real.components) expect(keys).toContain(component.key);
    expect(keys).toContain("helper_functions-uuid");
  });

  it("lists one item per key with its name, version, description, type and configurable_props, paged by key", async () => {
    const all = await list(ada.key, "?limit=100");
    expect(all.status).toBe(200);
    const pings = all.body.data.find((item: any) => item.key === "fixture_demo-new-pings");
    expect(pings).toEqual({
      key: "fixture_demo-new-pings",
      name: "New pings",
      version: "0.1.0",
      description: "Emits every ping sent to its endpoint, with a greeting.",
      type: "source",
      namespace: "catalog",
      published_at: expect.any(Number),
      versions: [{ version: "0.1.0", published_at: pings.published_at }],
      configurable_props: [
        { name: "http", type: "$.interface.http" },
        { name: "greeting", type: "string", label: "Greeting", description: "Put beside every ping.", optional: true, default: "hello" },
      ],
    });
    const keys = all.body.data.map((item: any) => item.key);
    expect(keys).toEqual([...keys].sort());
    expect(all.body.page_info).toMatchObject({ total_count: keys.length, count: keys.length, start_cursor: keys[0], end_cursor: keys.at(-1) });

    // Page by page, forwards then back, the same keys in the same order.
    const first = await list(ada.key, "?limit=1");
    expect(first.body.data.map((item: any) => item.key)).toEqual([keys[0]]);
    expect(first.body.page_info).toMatchObject({ total_count: keys.length, count: 1 });
    const second = await list(ada.key, `?limit=1&after=${first.body.page_info.end_cursor}`);
    expect(second.body.data.map((item: any) => item.key)).toEqual([keys[1]]);
    const back = await list(ada.key, `?limit=1&before=${second.body.page_info.start_cursor}`);
    expect(back.body.data.map((item: any) => item.key)).toEqual([keys[0]]);
    expect((await list(ada.key, "?limit=0")).body.error.details.field).toBe("limit");
  });

  it("searches by words over key, name and description, by app and by type", async () => {
    const keysOf = async (query: string) => (await list(ada.key, query)).body.data.map((item: any) => item.key);
    // (Words of the fixtures that the real catalog beside them does not have all of.)
    expect(await keysOf("?q=sum%20of%20two%20INTEGERS")).toEqual(["fixture_demo-add-numbers"]);
    expect(await keysOf("?q=ping%20greeting")).toEqual(["fixture_demo-new-pings"]);
    expect(await keysOf("?app=fixture_demo")).toEqual(["fixture_demo-add-numbers", "fixture_demo-new-pings"]);
    expect(await keysOf("?app=fixture_demo&type=source")).toEqual(["fixture_demo-new-pings"]);
    expect(await keysOf("?app=fixture_demo&type=action")).toEqual(["fixture_demo-add-numbers"]);
    expect(await keysOf("?q=no%20such%20thing")).toEqual([]);
    const bad = await list(ada.key, "?type=trigger");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("type");
    // The hosted API's word search finds catalog keys too.
    const found = await call(server.url, "GET", "/v1/components/search?query=add%20numbers&app=fixture_demo", { key: ada.key });
    expect(found.body).toEqual({ sources: [], actions: ["fixture_demo-add-numbers"] });
  });

  it("skips a component that fails to load or breaks the layout, naming it, and publishes the rest", async () => {
    const built = await loadCatalog(FIXTURE_CATALOG);
    expect(built.failures).toEqual([
      { path: "fixture_demo/actions/broken/broken.mjs", key: null, message: expect.stringContaining("this fixture breaks on load") },
      { path: "fixture_demo/actions/misnamed/misnamed.mjs", key: "fixture_demo-another-name", message: expect.stringContaining("its folder says fixture_demo-misnamed") },
    ]);
    const again = await server.server.engine.registry.publishCatalog(built);
    expect(again).toEqual({ added: [], failed: ["fixture_demo/actions/broken/broken.mjs", "fixture_demo-another-name"] });
    expect((await list(ada.key, "?q=misnamed")).body.data).toEqual([]);
  });

  it("never changes a published version: the same version with other code keeps the first", async () => {
    const built = await loadCatalog(FIXTURE_CATALOG);
    const before = await call(server.url, "GET", "/v1/components/registry/fixture_demo-add-numbers", { key: ada.key });
    const changed = built.components.map((component) => ({ ...component, code: `${component.code}\n// changed`, codeHash: "other" }));
    expect(await server.server.engine.registry.publishCatalog({ ...built, components: changed, failures: [] })).toEqual({ added: [], failed: [] });
    const after = await call(server.url, "GET", "/v1/components/registry/fixture_demo-add-numbers", { key: ada.key });
    expect(after.body.data.component.code).toBe(before.body.data.component.code);
    expect(after.body.data.component.code).not.toContain("// changed");
  });

  it("refuses to publish over a catalog key with a 409 naming the key", async () => {
    const code = `export default { key: "fixture_demo-add-numbers", name: "Mine", version: "9.0.0", type: "action", props: {}, async run() { return 1; } };`;
    const refused = await call(server.url, "POST", "/v1/components/registry", { key: ada.key, json: { component_code: code, filename: "mine.mjs" } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("Conflict");
    expect(refused.body.error.message).toContain("fixture_demo-add-numbers belongs to Runnel's catalog");
    expect(refused.body.error.details.key).toBe("fixture_demo-add-numbers");
    expect((await call(server.url, "GET", "/v1/components/registry/fixture_demo-add-numbers", { key: ada.key })).body.data.version).toBe("0.2.0");
  });

  it("gets a catalog key as the caller's own copy: the same view GET /v1/components/<id> gives", async () => {
    const got = await call(server.url, "GET", "/v1/components/registry/fixture_demo-new-pings", { key: ada.key });
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({ key: "fixture_demo-new-pings", version: "0.1.0", kind: "source", namespace: "catalog", component: { key: "fixture_demo-new-pings", type: "source" } });
    const byId = await call(server.url, "GET", `/v1/components/${got.body.data.component.id}`, { key: ada.key });
    expect(byId.body.data).toEqual(got.body.data.component);
    // Asked again: the same copy, not another.
    expect((await call(server.url, "GET", "/v1/components/registry/fixture_demo-new-pings", { key: ada.key })).body.data.component.id).toBe(got.body.data.component.id);
    // Bob's copy is Bob's: Ada's id is not his.
    const bobs = await call(server.url, "GET", "/v1/components/registry/fixture_demo-new-pings", { key: bob.key });
    expect(bobs.body.data.component.id).not.toBe(got.body.data.component.id);
    expect((await call(server.url, "GET", `/v1/components/${got.body.data.component.id}`, { key: bob.key })).status).toBe(404);
    expect((await call(server.url, "GET", "/v1/components/registry/fixture_demo-new-pings?version=9.9.9", { key: ada.key })).status).toBe(404);
  });

  it("deploys a catalog source by key (POST /v1/sources { key }), and it emits for real requests", async () => {
    const source = await deploySource(server, bob.key, { key: "fixture_demo-new-pings", name: "pings", configured_props: { greeting: "hi bob" } });
    const endpoint = (await call(server.url, "GET", `/v1/sources/${source.id}`, { key: bob.key })).body.data.endpoint_url;
    expect((await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 1 }) })).status).toBe(200);
    const [event] = await eventually(async () => {
      const events = await eventsOf(server, bob.key, source.id);
      return events.length > 0 ? events : undefined;
    });
    expect(event.event).toEqual({ greeting: "hi bob", ping: { n: 1 } });
    // A prop of the wrong type is refused as for any source, naming it.
    const refused = await call(server.url, "POST", "/v1/sources", { key: bob.key, json: { key: "fixture_demo-new-pings", configured_props: { greeting: 5 } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("configured_props.greeting");
    // An action is not deployable as a source.
    const action = await call(server.url, "POST", "/v1/sources", { key: bob.key, json: { key: "fixture_demo-add-numbers" } });
    expect(action.status).toBe(400);
  });

  it("runs catalog actions as workflow steps by key (its relative import bundled in)", async () => {
    const workflow = await createWorkflow(server, ada.key, {
      name: "Catalog steps",
      trigger: { type: "http" },
      steps: [
        { name: "sum", key: "fixture_demo-add-numbers", props: { a: 40, b: 2 } },
        { name: "defaulted", key: "fixture_demo-add-numbers", props: { a: 1 } },
        { name: "id", key: "helper_functions-uuid" },
      ],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST" });
    const [run] = await waitFor(() => runsOf(server, ada.key, workflow.id), (runs) => runs.length === 1 && runs[0].status !== "running", "the run");
    expect(run.status).toBe("success");
    expect(run.steps.map((step: any) => step.$return_value).slice(0, 2)).toEqual([42, 2]);
    expect(run.steps[2].$return_value).toMatch(/^[0-9a-f-]{36}$/);
    const missing = await call(server.url, "POST", "/v1/workflows", { key: ada.key, json: { name: "Missing", trigger: { type: "http" }, steps: [{ name: "x", key: "fixture_demo-add-numbers", props: {} }] } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe("steps[0].props.a");
  });

  it("leaves a key a user published before the catalog had it to that user; others get the catalog's", async () => {
    const cleo = await createUser(server, "cleo");
    const code = `export default { key: "fixture_late-thing", name: "Cleo's thing", version: "3.0.0", type: "action", props: {}, async run() { return "cleo"; } };`;
    expect((await call(server.url, "POST", "/v1/components/registry", { key: cleo.key, json: { component_code: code, filename: "thing.mjs" } })).status).toBe(201);
    // A later release of the catalog gains the same key.
    const built = await loadCatalog(FIXTURE_CATALOG);
    const adder = built.components.find((component) => component.key === "fixture_demo-add-numbers")!;
    const late = { ...built, failures: [], components: [{ ...adder, key: "fixture_late-thing", manifest: { ...adder.manifest, key: "fixture_late-thing" } }] };
    expect((await server.server.engine.registry.publishCatalog(late)).added).toEqual(["fixture_late-thing@0.2.0"]);

    expect((await call(server.url, "GET", "/v1/components/registry/fixture_late-thing", { key: cleo.key })).body.data).toMatchObject({ namespace: "user", version: "3.0.0" });
    expect((await list(cleo.key, "?app=fixture_late")).body.data).toEqual([expect.objectContaining({ key: "fixture_late-thing", namespace: "user", name: "Cleo's thing" })]);
    expect((await call(server.url, "GET", "/v1/components/registry/fixture_late-thing", { key: bob.key })).body.data).toMatchObject({ namespace: "catalog", version: "0.2.0" });
    expect((await list(bob.key, "?app=fixture_late")).body.data).toEqual([expect.objectContaining({ key: "fixture_late-thing", namespace: "catalog", name: "Add numbers" })]);
  });

  it("shows the caller's own keys beside the catalog, never another user's", async () => {
    const code = `export default { key: "ada-shout", name: "Shout", description: "Loud.", version: "1.0.0", type: "action", props: {}, async run() { return "!"; } };`;
    expect((await call(server.url, "POST", "/v1/components/registry", { key: ada.key, json: { component_code: code, filename: "shout.mjs" } })).status).toBe(201);
    const adas = (await list(ada.key, "?q=loud")).body.data;
    expect(adas).toEqual([expect.objectContaining({ key: "ada-shout", namespace: "user", type: "action", version: "1.0.0" })]);
    expect((await list(ada.key, "?namespace=user")).body.data.map((item: any) => item.key)).toEqual(["ada-shout"]);
    expect((await list(bob.key, "?q=loud")).body.data).toEqual([]);
    expect((await list(bob.key, "?namespace=user")).body.data).toEqual([]);
  });
});

describe("publishing the catalog from several processes at once, on PostgreSQL", () => {
  it("publishes each version once and fails none of them", async () => {
    const schema = await createTestSchema("runnel_catalog");
    const server = await startTestServer({ DATABASE_URL: schema.databaseUrl });
    // Three more processes' worth of stores and registries on the same database.
    const others = await Promise.all([1, 2, 3].map(() => openStore({ databaseUrl: schema.databaseUrl, dataDir: server.dataDir })));
    try {
      const built = await loadCatalog(FIXTURE_CATALOG);
      const registries = [server.server.engine.registry, ...others.map((store) => new RegistryService({ store, loader: server.server.engine.registry["options"].loader }))];
      const results = await Promise.all(registries.map((registry) => registry.publishCatalog(built)));
      // Each version added by exactly one of them; no one failed on the others' inserts.
      expect(results.flatMap((result) => result.added).sort()).toEqual(["fixture_demo-add-numbers@0.2.0", "fixture_demo-new-pings@0.1.0"]);
      for (const result of results) expect(result.failed).toEqual(["fixture_demo/actions/broken/broken.mjs", "fixture_demo-another-name"]);
      const rows = await schema.admin.query(`SELECT key, version FROM ${schema.schema}.catalog_components WHERE key LIKE 'fixture_demo-%' ORDER BY key`);
      expect(rows.rows.map((row) => `${row.key}@${row.version}`)).toEqual(["fixture_demo-add-numbers@0.2.0", "fixture_demo-new-pings@0.1.0"]);
      // Start-up had published the real catalog/ there already, once.
      const real = await schema.admin.query(`SELECT count(*)::int AS n FROM ${schema.schema}.catalog_components WHERE key NOT LIKE 'fixture_demo-%'`);
      expect(real.rows[0].n).toBe((await loadCatalog()).components.length);
    } finally {
      await Promise.all(others.map((store) => store.close()));
      await server.close();
      await schema.drop();
    }
  });
});
