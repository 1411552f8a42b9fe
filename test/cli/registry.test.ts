import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/catalog/load-catalog.js";
import { runCli } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";

/** The registry test's own catalog folder (not catalog/): one source, one action. */
const FIXTURE_CATALOG = resolve(import.meta.dirname, "..", "registry", "fixtures", "catalog");

describe("runnel list registry and runnel deploy <catalog key>", () => {
  let server: TestServer;
  let user: { id: string; key: string };
  let home: string;
  const cli = (...args: string[]) => runCli(args, { env: { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: user.key, HOME: home, XDG_CONFIG_HOME: home }, cwd: home });

  beforeAll(async () => {
    server = await startTestServer();
    await server.server.engine.registry.publishCatalog(await loadCatalog(FIXTURE_CATALOG));
    user = await createUser(server, "lister");
    home = await mkdtemp(join(tmpdir(), "runnel-cli-registry-"));
  });
  afterAll(async () => {
    await server?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("lists the registry as a table of key, type, version and description, catalog/ included", async () => {
    const listed = await cli("list", "registry");
    expect(listed.code).toBe(0);
    const header = listed.stdout.split("\n").find((line) => line.includes("key"))!;
    expect(header.split("│").map((cell) => cell.trim()).filter(Boolean)).toEqual(["key", "type", "version", "description"]);
    const row = listed.stdout.split("\n").find((line) => line.includes("fixture_demo-new-pings"))!;
    expect(row.split("│").map((cell) => cell.trim()).filter(Boolean)).toEqual(["fixture_demo-new-pings", "source", "0.1.0", "Emits every ping sent to its endpoint, with a greeting."]);
    expect(listed.stdout).toContain("helper_functions-uuid");
    expect(listed.stderr).toContain("runnel deploy <key>");
  });

  it("searches by words, --app and --type, and says so when nothing matches", async () => {
    const keysIn = (stdout: string) => [...stdout.matchAll(/fixture_demo-[a-z-]+/g)].map((match) => match[0]);
    expect(keysIn((await cli("list", "registry", "sum", "of", "two")).stdout)).toEqual(["fixture_demo-add-numbers"]);
    expect(keysIn((await cli("list", "registry", "--app", "fixture_demo", "--type", "source")).stdout)).toEqual(["fixture_demo-new-pings"]);
    const json = JSON.parse((await cli("list", "registry", "--app", "fixture_demo", "--json")).stdout);
    expect(json.map((item: any) => [item.key, item.type, item.namespace])).toEqual([
      ["fixture_demo-add-numbers", "action", "catalog"],
      ["fixture_demo-new-pings", "source", "catalog"],
    ]);
    const none = await cli("list", "registry", "nothing", "like", "this");
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain('Nothing in the registry matches "nothing like this"');
    const badType = await cli("list", "registry", "--type", "trigger");
    expect(badType.code).not.toBe(0);
    expect(badType.stderr).toContain('--type is source, action or app; got "trigger"');
    const wordsElsewhere = await cli("list", "sources", "pings");
    expect(wordsElsewhere.code).not.toBe(0);
    expect(wordsElsewhere.stderr).toContain("are for `runnel list registry`");
  });

  it("deploys a catalog source by key with its props, and it runs", async () => {
    const deployed = await cli("deploy", "fixture_demo-new-pings", "--prop", "greeting=from the cli", "--json");
    expect(deployed.stderr).toBe("");
    expect(deployed.code).toBe(0);
    const source = JSON.parse(deployed.stdout);
    expect(source.configured_props.greeting).toBe("from the cli");
    // The component is the user's own copy of the catalog's.
    const component = await call(server.url, "GET", `/v1/components/${source.component_id}`, { key: user.key });
    expect(component.body.data).toMatchObject({ key: "fixture_demo-new-pings", version: "0.1.0" });
    expect((await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"from":"cli"}' })).status).toBe(200);
  });

  it("refuses an action key and an unknown key with messages that say what to do", async () => {
    const action = await cli("deploy", "fixture_demo-add-numbers", "--prop", "a=1");
    expect(action.code).not.toBe(0);
    expect(action.stderr).toContain("is an action, a workflow step: only sources can be deployed");
    const unknown = await cli("deploy", "fixture_demo-no-such-thing");
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("runnel list registry <words>");
  });
});
