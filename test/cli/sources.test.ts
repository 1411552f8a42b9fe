import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runCliInProcess, type CliResult } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { ECHO_JS, FIXTURES, writeFixtures } from "./fixtures.js";
import { freePort } from "../helpers/ports.js";

describe("runnel source commands against a real server", () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  // In this process (what the commands do); the spawned binary is kept for `-f` below and in cli.test.ts.
  const cli = (...args: string[]): Promise<CliResult> => runCliInProcess(args, { env, cwd: dir });
  const json = (result: CliResult) => {
    expect(result.stderr.startsWith("Error") ? result.stderr : "").toBe("");
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout);
  };
  const post = (url: string, body: unknown) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((response) => response.status);

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-sources-"));
    key = (await createUser(server, "sam")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
    await writeFixtures(dir);
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("deploys a file with its app file and helpers, imported by relative path, and by the key it saved", async () => {
    const source = json(await cli("deploy", FIXTURES.greet, "--prop", "label=world", "--json"));
    expect(source).toMatchObject({ name: "Greet", name_slug: "greet", active: true, configured_props: { label: "world" } });
    expect(await post(source.endpoint_url, {})).toBe(200);

    const events = json(await cli("events", "greet", "--json"));
    expect(events.map((event: any) => event.event)).toEqual([{ greeting: "hello world", origin: "from-common" }]);

    // The saved component is found again by its key.
    const again = json(await cli("deploy", "greet", "--name", "Greet Again", "--prop", "label=you", "--json"));
    expect(again).toMatchObject({ name_slug: "greet-again", component_key: "greet", configured_props: { label: "you" } });
  });

  it("deploys CommonJS with --prop (a string prop keeps digits as text), and names missing props when it cannot ask", async () => {
    const missing = await cli("deploy", FIXTURES.echo);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Missing required prop: label. Give it with --prop label=");

    const deployed = await cli("deploy", FIXTURES.echo, "--prop", "label=007");
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toMatch(/^Deployed echo \(dc_[0-9a-z]+\)$/m);
    expect(deployed.stdout).toMatch(/endpoint: +http:\/\/127\.0\.0\.1:\d+\/e\/\S+/);
    expect(deployed.stdout).toContain('prop:      label = "007"');
  });

  it("reads prop answers piped to stdin, and says so when the server is down", async () => {
    const answered = await runCliInProcess(["deploy", FIXTURES.echo, "--name", "Piped", "--json"], { env, cwd: dir, input: "from a pipe\n" });
    expect(answered.stderr).toContain("label (string): ");
    expect(JSON.parse(answered.stdout)).toMatchObject({ name_slug: "piped", configured_props: { label: "from a pipe" } });

    const port = await freePort();
    const down = await runCli(["events", "piped", "-f"], { env: { ...env, RUNNEL_SERVER_URL: `http://127.0.0.1:${port}` }, cwd: dir });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`Could not reach the Runnel server at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });

  it("deploys from a URL of raw code", async () => {
    const host = createHttpServer((_request, response) => response.end(ECHO_JS));
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    try {
      const address = host.address() as AddressInfo;
      const source = json(await cli("deploy", `http://127.0.0.1:${address.port}/echo.js`, "--name", "From URL", "--prop", "label=url", "--json"));
      expect(source).toMatchObject({ name_slug: "from-url", configured_props: { label: "url" } });
    } finally {
      host.close();
    }
  });

  it("deploys a TypeScript file and runs it on demand", async () => {
    json(await cli("deploy", FIXTURES.doubler, "--json"));
    const run = await cli("run", "doubler", "--event", '{"n":21}');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("doubled");
    expect(run.stdout).toContain('{"input":21,"doubled":42}');
    expect(run.stderr).toContain("emitted 1 event");
  });

  it("exits 1 and shows the error when a run fails", async () => {
    json(await cli("deploy", FIXTURES.broken, "--json"));
    const run = await cli("run", "broken");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("The run failed");
    expect(run.stderr).toContain("boom on purpose");
    expect((await cli("run", "broken", "--event", "{not json")).stderr).toContain("--event must be JSON");
  });

  it("shows a failed run's stack at the lines of the files deployed, imported helpers too, with no path of the server", async () => {
    json(await cli("deploy", FIXTURES.failing, "--json"));
    const run = await cli("run", "failing");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("RangeError: not the answer: 41");
    // The CLI sends its map with the bundle; the server chains it, so the frames are the files' own lines.
    expect(run.stderr).toMatch(/at check \(\.\.\/common\/check\.mjs:3:23\)/);
    expect(run.stderr).toMatch(/failing\.mjs:7:5\)/);
    expect(run.stderr).not.toContain(server.dataDir);
    expect(run.stderr).not.toContain(dir);
    expect(run.stderr).not.toContain("component.cjs");
  });

  it("describes, lists, updates and deletes a source by its name", async () => {
    const described = await cli("describe", "echo");
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/^echo \(dc_/);
    expect(described.stdout).toContain("component: Echo 0.1.0 (sc_");
    expect(described.stdout).toContain('label [string] = "007"');

    const list = await cli("list", "sources");
    expect(list.code).toBe(0);
    for (const slug of ["greet", "greet-again", "echo", "piped", "from-url", "doubler", "broken"]) expect(list.stdout).toContain(` ${slug} `);
    const components = json(await cli("ls", "components", "--json"));
    expect(components.map((component: any) => component.name).sort()).toEqual(["Broken", "Doubler", "Echo", "Echo", "Failing", "Greet"]);
    expect(components.find((component: any) => component.name === "Greet").sources.sort()).toEqual(["greet", "greet-again"]);
    expect(components[0]).not.toHaveProperty("code");

    const renamed = json(await cli("update", "echo", "--name", "Echo Two", "--deactivate", "--json"));
    expect(renamed).toMatchObject({ name: "Echo Two", name_slug: "echo-two", active: false });
    expect(await post(renamed.endpoint_url, {})).toBe(404);

    // Changing one prop keeps the others, and the endpoint stays the same.
    const reconfigured = json(await cli("update", "echo-two", "--prop", "label=new", "--activate", "--json"));
    expect(reconfigured).toMatchObject({ id: renamed.id, active: true, endpoint_url: renamed.endpoint_url, configured_props: { label: "new" } });

    const nothing = await cli("update", "echo-two");
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain("Nothing to update");

    const deleted = await cli("delete", "echo-two", "--yes");
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe(`Deleted source echo-two (${renamed.id}).\n`);
    const gone = await cli("describe", renamed.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/Error \(NotFound\)/);
  });

  it("updates a source's code from a file", async () => {
    const before = json(await cli("describe", "broken", "--json"));
    json(await cli("update", "broken", "--code", FIXTURES.doubler, "--json"));
    const after = json(await cli("describe", "broken", "--json"));
    expect(after.component.name).toBe("Doubler");
    expect(after.id).toBe(before.id);
    expect((await cli("run", "broken")).code).toBe(0);
  });

  it("shows the latest events oldest first, -n of them, and the logs", async () => {
    const source = json(await cli("deploy", FIXTURES.greet, "--name", "Events", "--prop", "label=a", "--json"));
    for (const label of ["b", "c"]) {
      json(await cli("update", "events", "--prop", `label=${label}`, "--json"));
      expect(await post(source.endpoint_url, {})).toBe(200);
    }
    const two = await cli("events", "events", "-n", "2");
    expect(two.code).toBe(0);
    expect(two.stdout.indexOf("hello b")).toBeGreaterThan(-1);
    expect(two.stdout.indexOf("hello b")).toBeLessThan(two.stdout.indexOf("hello c"));
    const one = json(await cli("events", source.id, "-n", "1", "--json"));
    expect(one.map((event: any) => event.event.greeting)).toEqual(["hello c"]);
    expect((await cli("events", "events", "-n", "101")).stderr).toContain("-n must be a whole number from 1 to 100");

    const logs = await cli("logs", "events");
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/greeting b\n.*greeting c\n$/);
    const lastLog = json(await cli("logs", "events", "-n", "1", "--json"));
    expect(lastLog).toMatchObject([{ stream: "stdout", text: "greeting c" }]);
  });

  it("has --help on every source command", async () => {
    const commands = [["deploy"], ["dev"], ["update"], ["delete"], ["describe"], ["list"], ["events"], ["logs"], ["run"], ["init", "source"], ["init", "action"]];
    const helps = await Promise.all(commands.map((args) => cli(...args, "--help")));
    helps.forEach((help, index) => {
      expect(help.code, commands[index]!.join(" ")).toBe(0);
      expect(help.stdout, commands[index]!.join(" ")).toMatch(/^Usage: runnel/);
    });
  });

  it("init writes a source that deploys, and never overwrites", async () => {
    const init = await cli("init", "source", "My Hook", "--http", "--db");
    expect(init.code).toBe(0);
    expect(init.stdout).toBe(`Wrote ${join("my-hook", "my-hook.mjs")}.\n`);
    const code = await readFile(join(dir, "my-hook", "my-hook.mjs"), "utf8");
    expect(code).toMatch(/^export default \{/);
    expect(code).toContain('key: "my-hook"');

    const source = json(await cli("deploy", "my-hook/my-hook.mjs", "--json"));
    expect(source.component_key).toBe("my-hook");
    expect(await post(source.endpoint_url, { hi: 1 })).toBe(200);
    expect(await post(source.endpoint_url, { hi: 2 })).toBe(200);
    const events = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries`, { key });
    expect(events.body.data.map((event: any) => event.event)).toEqual([
      { body: { hi: 2 }, query: {}, count: 2 },
      { body: { hi: 1 }, query: {}, count: 1 },
    ]);

    const again = await cli("init", "source", "My Hook");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists already");
    expect(await readFile(join(dir, "my-hook", "my-hook.mjs"), "utf8")).toBe(code);

    // With no flags, an HTTP source: it deploys with an endpoint that takes requests.
    expect((await cli("init", "source", "Plain Hook")).code).toBe(0);
    const plain = await readFile(join(dir, "plain-hook", "plain-hook.mjs"), "utf8");
    expect(plain).toContain('http: { type: "$.interface.http" }');
    const plainSource = json(await cli("deploy", "plain-hook/plain-hook.mjs", "--json"));
    expect(await post(plainSource.endpoint_url, { hi: 3 })).toBe(200);
    const timerOnly = await cli("init", "source", "Ticker", "--timer");
    expect(timerOnly.code).toBe(0);
    expect(await readFile(join(dir, "ticker", "ticker.mjs"), "utf8")).not.toContain("$.interface.http");
    expect((await cli("init", "source", "By Hand", "--manual")).code).toBe(0);
    expect(await readFile(join(dir, "by-hand", "by-hand.mjs"), "utf8")).toContain("props: {},");

    expect((await cli("init", "action", "Say Hi")).code).toBe(0);
    expect(await readFile(join(dir, "say-hi", "say-hi.mjs"), "utf8")).toContain('type: "action"');
  });
});
