import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { RUNNEL_BIN, startCli } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { ECHO_JS } from "./fixtures.js";

/** Commands that keep running: events -f, logs -f and dev, each ended with Ctrl-C (SIGINT). */
describe("runnel commands that follow a source", () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let key: string;

  const deploy = async (code: string, name: string) => {
    const created = await call(server.url, "POST", "/v1/sources", { key, json: { component_code: code, name, configured_props: { label: name } } });
    expect(created.status).toBe(200);
    return created.body.data as { id: string; name_slug: string; endpoint_url: string };
  };
  const latestEvents = async (id: string) => (await call(server.url, "GET", `/v1/sources/${id}/event_summaries?expand=event`, { key })).body.data as any[];
  const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-follow-"));
    key = (await createUser(server, "fran")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("events -f and logs -f print the latest, then live ones, until Ctrl-C ends them with exit 0", async () => {
    const source = await deploy(ECHO_JS.replace("async run(event) {", 'async run(event) { console.log("ran", event.body.n);'), "live");
    await post(source.endpoint_url, { n: 1 });

    const events = startCli(["events", "live", "-f", "--json"], { env, cwd: dir });
    const logs = startCli(["logs", source.id, "-f"], { env, cwd: dir });
    await Promise.all([events.waitFor(/Following events of live/), logs.waitFor(/Following logs of live/)]);
    await post(source.endpoint_url, { n: 2 });
    await events.waitFor(/"n":2/);
    await logs.waitFor(/ran 2/);

    events.child.kill("SIGINT");
    logs.child.kill("SIGINT");
    expect(await events.exited).toEqual({ code: 0, signal: null });
    expect(await logs.exited).toEqual({ code: 0, signal: null });
    // NDJSON: one event per line, the one from before the follow first.
    const lines = events.stdout().trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.map((line) => line.event.body.n)).toEqual([1, 2]);
    expect(logs.stdout()).toMatch(/ran 1\n.*ran 2\n$/);
  });

  it("dev deploys, updates on save, survives a syntax error, and leaves the source deployed on Ctrl-C", async () => {
    const file = join(dir, "dev-source.mjs");
    const version = (n: number) =>
      `export default { name: "Dev Source", version: "0.1.${n}", props: { http: { type: "$.interface.http" } },\n` +
      `  async run(event) { console.log("version ${n}"); this.$emit({ version: ${n} }, { summary: "v${n}" }); } };\n`;
    await writeFile(file, version(1));

    const dev = startCli(["dev", file], { env, cwd: dir });
    await dev.waitFor(/Watching .*dev-source\.mjs/);
    const id = (await dev.waitFor(/^Deployed dev-source \((dc_[0-9a-z]+)\)$/m))[1]!;
    const endpoint = (await dev.waitFor(/endpoint: +(\S+)/))[1]!;

    await post(endpoint, {});
    await dev.waitFor(/^event .*v1$/m);

    await writeFile(file, version(2));
    await dev.waitFor(/updated dev-source from dev-source\.mjs/);
    await post(endpoint, {});
    expect((await latestEvents(id))[0].event).toEqual({ version: 2 });
    await dev.waitFor(/^log .*version 2$/m);

    await writeFile(file, "export default { name: \n");
    await dev.waitFor(/not updated: Syntax error at line 2/);
    expect(dev.child.exitCode).toBeNull();

    await writeFile(file, version(3));
    await dev.waitFor(/updated dev-source[\s\S]*updated dev-source/);
    await post(endpoint, {});
    expect((await latestEvents(id))[0].event).toEqual({ version: 3 });

    dev.child.kill("SIGINT");
    expect(await dev.exited).toEqual({ code: 0, signal: null });
    expect(dev.stderr()).toContain("dev-source stays deployed");
    expect((await call(server.url, "GET", `/v1/sources/${id}`, { key })).status).toBe(200);
    expect(await readFile(file, "utf8")).toBe(version(3));
  });

  it("dev on a workflow file sends the test event, updates on a save of a step file, survives a mistake, and streams runs with their logs", async () => {
    await mkdir(join(dir, "flow", "steps"), { recursive: true });
    const yaml = join(dir, "flow", "dev-flow.yaml");
    const step = join(dir, "flow", "steps", "say.ts");
    const say = (word: string) =>
      `export default defineComponent({ async run({ steps }) { console.log("${word}", steps.trigger.event.body.a); return "${word}"; } });\n`;
    await writeFile(yaml, "name: Dev flow\ntrigger: { type: http }\nsteps:\n  - name: say\n    code_file: ./steps/say.ts\n");
    await writeFile(step, say("hello"));

    const dev = startCli(["dev", yaml, "--event", '{"a":1}'], { env, cwd: dir });
    const id = (await dev.waitFor(/^Created workflow dev-flow \((p_[0-9a-z]+)\)$/m))[1]!;
    const endpoint = (await dev.waitFor(/endpoint: +(\S+)/))[1]!;
    await dev.waitFor(/Watching dev-flow\.yaml and its step files/);
    await dev.waitFor(/sent the test event to \S+ \(HTTP 200\)/);
    await dev.waitFor(/^run {2}\S+Z {2}run_[0-9a-z]+ {2}success[\s\S]*^run {4}say: hello 1$/m);

    await writeFile(step, say("howdy"));
    await dev.waitFor(/updated dev-flow from dev-flow\.yaml/);
    await post(endpoint, { a: 2 });
    await dev.waitFor(/^run {4}say: howdy 2$/m);

    await writeFile(yaml, "name: Dev flow\ntrigger: { type: http }\nsteps:\n  - name: say\n    code_fil: ./steps/say.ts\n");
    await dev.waitFor(/not updated: dev-flow\.yaml:5: steps\[0\]\.code_fil: not a key of a step; did you mean code_file\?/);
    expect(dev.child.exitCode).toBeNull();

    dev.child.kill("SIGINT");
    expect(await dev.exited).toEqual({ code: 0, signal: null });
    expect(dev.stderr()).toContain("dev-flow stays deployed");
    expect((await call(server.url, "GET", `/v1/workflows/${id}`, { key })).status).toBe(200);
  });

  it("dev on a workflow file, on a terminal, sends the test event again on t and Enter, and stops on Ctrl-C", async () => {
    const yaml = join(dir, "flow", "keys.yaml");
    await mkdir(join(dir, "flow"), { recursive: true });
    await writeFile(yaml, "name: Keys\ntrigger: { type: http }\nsteps:\n  - name: say\n    code: |\n      export default defineComponent({ async run({ steps }) { console.log('n is', steps.trigger.event.body.n) } })\n");
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, RUNNEL_BIN, "dev", yaml, "--event", '{"n":7}'].map(quote).join(" ");
    // A pseudo-terminal (util-linux `script`) whose keys are typed one at a time, as a person would.
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: dir, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const runs = () => (out.match(/say: n is 7/g) ?? []).length;
    const until = async (check: () => boolean, what: string) => {
      for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(check(), `${what}; output: ${out}`).toBe(true);
    };
    try {
      await until(() => out.includes("Enter or t sends the test event again") && runs() === 1, "the first run");
      child.stdin.write("t");
      await until(() => runs() === 2, "a run after t");
      child.stdin.write("\r");
      await until(() => runs() === 3, "a run after Enter");
      child.stdin.write("\u0003");
      expect(await exited).toBe(0);
      expect(out).toContain("keys stays deployed");
    } finally {
      if (child.exitCode === null) child.kill();
    }
  });
});
