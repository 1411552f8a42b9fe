import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, runCliOnTerminal, startCli, type CliResult } from "../helpers/child.js";
import { createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { errorsOf, runsOf, waitFor } from "../workflows/helpers.js";

/**
 * What the terminal shows: on each line, what was written after its last return to the first column (a carriage
 * return, or the spinner's cursor move before it redraws or clears its line), escape codes removed. Under load the
 * spinner drew a frame just before the answer, on the same line, which only the terminal's redraw hides.
 */
const withoutEscapes = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.split(/\r|\x1b\[1?G/).at(-1)!.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ""))
    .join("\n");

/** An HTTP workflow: an inline step, then a TypeScript file that imports a helper by relative path. */
const GREETER_YAML = `name: Greeter
trigger:
  type: http
steps:
  - name: parse
    code: |
      export default defineComponent({
        async run({ steps }) { return steps.trigger.event.body.name; }
      })
  - name: shout
    code_file: ./steps/shout.ts
    props:
      who: "{{steps.parse.$return_value}}"
`;

const SHOUT_TS = `import { upper } from "../lib/upper";

export default defineComponent({
  props: { who: { type: "string" } },
  async run(this: { who: string }, { $ }: { $: any }) {
    $.export("$summary", "shouted");
    $.export("length", this.who.length);
    console.log("shouting at", this.who);
    return upper(this.who);
  },
});
`;

const UPPER_TS = `export const upper = (text: string): string => text.toUpperCase() + "!";\n`;

const FAILING_YAML = `name: Failing
trigger: { type: http }
steps:
  - name: boom
    code: |
      export default defineComponent({
        async run({ steps }) { throw new Error("kaput " + steps.trigger.event.body.n); }
      })
`;

const FILES: Record<string, string> = {
  "flows/greeter.yaml": GREETER_YAML,
  "flows/steps/shout.ts": SHOUT_TS,
  "flows/lib/upper.ts": UPPER_TS,
  "flows/failing.yaml": FAILING_YAML,
  // Line 4 holds the bad value.
  "flows/tick.yaml": "name: Tick\ntrigger:\n  type: timer\n  intervalSeconds: 0\nsteps:\n  - name: a\n    code: export default defineComponent({ async run() {} })\n",
  // Line 7: an expression reading a step that does not run before this one.
  "flows/bad-ref.yaml": "name: Bad ref\ntrigger: { type: http }\nsteps:\n  - name: a\n    code: export default defineComponent({ async run() { return 1 } })\n    props:\n      x: '{{steps.later.y}}'\n",
  // Line 7: a syntax error inside inline code.
  "flows/bad-code.yaml": "name: Bad code\ntrigger: { type: http }\nsteps:\n  - name: a\n    code: |\n      export default defineComponent({\n        async run() { return 1 +; }\n      })\n",
  "flows/syntax.yaml": "name: Broken\ntrigger: a: b\nsteps: []\n",
  "flows/unknown.yaml": "name: Unknown\ntrigger: { type: http }\nsteps:\n  - name: a\n    code_file: ./steps/shout.ts\n    prop: {}\n",
  "flows/missing.yaml": "name: Missing\nsteps:\n  - name: a\n    code_file: ./steps/nope.ts\n",
};

describe("runnel workflow commands against a real server", () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  let otherEnv: Record<string, string>;
  // In this process (what the commands do); the binary itself is run on a terminal and with -f below.
  const cli = (...args: string[]): Promise<CliResult> => runCliInProcess(args, { env, cwd: dir });
  const ok = (result: CliResult): CliResult => {
    expect(result.stderr.startsWith("Error") ? result.stderr : "", result.stdout).toBe("");
    expect(result.code, `exit code ${result.code}; stderr: ${result.stderr}`).toBe(0);
    return result;
  };
  const json = (result: CliResult) => JSON.parse(ok(result).stdout);
  const post = (url: string, body: unknown) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((response) => response.status);

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-workflows-"));
    key = (await createUser(server, "wanda")).key;
    const otherKey = (await createUser(server, "olga")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
    otherEnv = { ...env, RUNNEL_API_KEY: otherKey };
    for (const [path, text] of Object.entries(FILES)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  let greeter: { id: string; endpoint: string };
  let failingId: string;

  it("deploys a workflow file (inline code and a TypeScript file with a relative import), runs it, shows its runs, and updates it on a redeploy", async () => {
    const deployed = ok(await cli("deploy", "flows/greeter.yaml"));
    const id = /^Created workflow greeter \((p_[0-9a-z]+)\)$/m.exec(deployed.stdout)?.[1];
    expect(id, deployed.stdout).toBeDefined();
    const endpoint = /^ {2}endpoint: (http:\/\/127\.0\.0\.1:\d+\/e\/\S+)$/m.exec(deployed.stdout)?.[1];
    expect(endpoint, deployed.stdout).toBeDefined();
    expect(deployed.stdout).toMatch(/^ {4}1\. parse \(c_[0-9a-z]+\)$/m);
    expect(deployed.stdout).toMatch(/^ {4}2\. shout \(c_[0-9a-z]+\)$/m);
    expect(deployed.stderr).toContain("runnel runs greeter");

    expect(await post(endpoint!, { name: "bob" })).toBe(200);
    const [run] = await waitFor(() => runsOf(server, key, id!), (runs) => runs.length === 1, "the run");
    expect(run).toMatchObject({ status: "success", steps: [{ $return_value: "bob" }, { $return_value: "BOB!" }] });

    const table = ok(await cli("runs", "greeter"));
    expect(table.stdout).toContain(run.id);
    expect(table.stdout).toMatch(new RegExp(`${run.id}\\s*│\\s*\\S+Z\\s*│\\s*success\\s*│\\s*\\d+ ms`));
    const listed = json(await cli("runs", id!, "-n", "1", "--json"));
    expect(listed.map((item: any) => item.id)).toEqual([run.id]);

    const detail = ok(await cli("runs", run.id)).stdout;
    expect(detail).toMatch(new RegExp(`^${run.id}  success  \\d+ ms$`, "m"));
    expect(detail).toMatch(/^ {2}1\. parse \(c_[0-9a-z]+\) {2}success/m);
    expect(detail).toContain('     return:  "bob"');
    expect(detail).toMatch(/^ {2}2\. shout \(c_[0-9a-z]+\) {2}success/m);
    expect(detail).toContain("     summary: shouted");
    expect(detail).toContain('     return:  "BOB!"');
    expect(detail).toContain("     export:  length = 3");
    expect(detail).toMatch(/^ {7}\S+Z {2}shouting at bob$/m);

    // Redeploying the same file never replaces the workflow silently: without a terminal it needs --update, and says so.
    const refused = await cli("deploy", "flows/greeter.yaml");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`A workflow named greeter exists already (${id}). Replace it with flows/greeter.yaml? There is no terminal to ask on: pass --update to go ahead.`);
    expect(json(await cli("list", "workflows", "--json")).filter((workflow: any) => workflow.name === "Greeter")).toHaveLength(1);
    // On a terminal it asks: "n" leaves the workflow as it was, "y" updates it.
    const declined = await runCliOnTerminal(["deploy", "flows/greeter.yaml"], { env, cwd: dir, input: "n\n" });
    expect(declined.stdout).toContain(`A workflow named greeter exists already (${id}). Replace it with flows/greeter.yaml? [y/N]: `);
    expect(declined.stdout).toContain("Nothing was deployed.");
    expect(declined.code).toBe(1);
    const accepted = await runCliOnTerminal(["deploy", "flows/greeter.yaml"], { env, cwd: dir, input: "y\n" });
    // The spinner drawn on the terminal meanwhile leaves escape codes before the line.
    expect(withoutEscapes(accepted.stdout)).toMatch(new RegExp(`^Updated workflow greeter \\(${id}\\)$`, "m"));
    expect(accepted.code).toBe(0);
    // With --update it updates that workflow without asking: same id, same endpoint.
    const again = ok(await cli("deploy", "flows/greeter.yaml", "--update"));
    expect(again.stdout).toMatch(new RegExp(`^Updated workflow greeter \\(${id}\\)$`, "m"));
    expect(again.stdout).toContain(`  endpoint: ${endpoint}\n`);
    greeter = { id: id!, endpoint: endpoint! };
    expect(await post(endpoint!, { name: "amy" })).toBe(200);
    await waitFor(() => runsOf(server, key, id!), (runs) => runs.length === 2 && runs[0].steps[1].$return_value === "AMY!", "the run after the update");
  });

  it("logs and events show a workflow's runs, what each step printed and the event it ran on; -f follows new runs", async () => {
    const logs = ok(await cli("logs", "greeter")).stdout;
    // Oldest first: bob's run, then amy's, each with the step's name before what it printed.
    expect(logs).toMatch(/^\S+Z {2}run_[0-9a-z]+ {2}success {2}\d+ ms$/m);
    expect(logs.indexOf("shout: shouting at bob")).toBeGreaterThan(-1);
    expect(logs.indexOf("shout: shouting at bob")).toBeLessThan(logs.indexOf("shout: shouting at amy"));
    expect(ok(await cli("logs", greeter.id, "-n", "1")).stdout).not.toContain("bob");
    const events = ok(await cli("events", "greeter")).stdout;
    expect(events).toMatch(/^\S+Z {2}\S+ from \S+ {2}→ run_[0-9a-z]+ success\n {2}\{.*"name":"amy"/m);
    expect(json(await cli("events", "greeter", "-n", "1", "--json"))[0]).toMatchObject({ id: expect.stringMatching(/^run_/), trigger: { event: { body: { name: "amy" } } } });

    const following = startCli(["logs", "greeter", "-f"], { env, cwd: dir });
    const followingEvents = startCli(["events", "greeter", "-f", "--json"], { env, cwd: dir });
    await Promise.all([following.waitFor(/Following runs of greeter; Ctrl-C to stop/), followingEvents.waitFor(/Following runs of greeter/)]);
    expect(await post(greeter.endpoint, { name: "cy" })).toBe(200);
    await following.waitFor(/shout: shouting at cy/);
    await followingEvents.waitFor(/"name":"cy"/);
    following.child.kill("SIGINT");
    followingEvents.child.kill("SIGINT");
    expect(await following.exited).toEqual({ code: 0, signal: null });
    expect(await followingEvents.exited).toEqual({ code: 0, signal: null });
    // Each run printed once: the two before the follow, then the new one.
    expect(following.stdout().match(/shouting at cy/g)).toHaveLength(1);
    expect(followingEvents.stdout().trim().split("\n").map((line) => JSON.parse(line).trigger.event.body.name)).toEqual(["bob", "amy", "cy"]);
  });

  it("lists a failing workflow's errors with the step's name and replays them, one by id or --all, into runs with replay_of", async () => {
    // --json prints the API object.
    const workflow = json(await cli("deploy", "flows/failing.yaml", "--json"));
    expect(workflow).toMatchObject({ id: expect.stringMatching(/^p_/), name_slug: "failing", trigger: { type: "http" }, steps: [{ name: "boom" }] });
    failingId = workflow.id;
    const [boom] = workflow.steps;
    expect(await post(workflow.trigger.endpoint_url, { n: 1 })).toBe(200);
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the error");
    const errorId: string = errors.data[0].id;

    const listed = ok(await cli("errors", "failing"));
    expect(listed.stdout).toMatch(new RegExp(`${errorId}\\s*│\\s*\\S+Z\\s*│\\s*UserError\\s*│\\s*boom \\(${boom.id}\\)\\s*│\\s*kaput 1`));
    expect(json(await cli("errors", workflow.id, "--json"))[0]).toMatchObject({ id: errorId, event: { error: { code: "UserError", cellId: boom.id } } });

    const all = ok(await cli("errors", "replay", "failing", "--all", "--code", "UserError", "--step", "boom"));
    expect(all.stdout).toMatch(new RegExp(`^Replayed ${errorId} \\(event \\S+\\)$`, "m"));
    expect(all.stderr).toContain("runnel runs failing");
    const replays = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.some((run: any) => run.replay_of === errorId), "the replayed run");
    const replay = replays.find((run: any) => run.replay_of === errorId);
    const runs = ok(await cli("runs", "failing"));
    expect(runs.stdout).toMatch(new RegExp(`${replay.id}\\s*│\\s*\\S+Z\\s*│\\s*error\\s*│\\s*\\d+ ms\\s*│\\s*UserError\\s*│\\s*${errorId}`));
    const detail = ok(await cli("runs", replay.id)).stdout;
    expect(detail).toContain(`  replay of: ${errorId}`);
    expect(detail).toContain(`  workflow:  failing (${workflow.id})`);
    // One "Error" is enough: the code says it failed, a plain Error's name adds nothing.
    expect(detail).toContain("     error:   UserError: kaput 1");
    expect(detail).toMatch(/^ {7}at /m);

    const one = json(await cli("errors", "replay", "failing", errorId, "--json"));
    expect(one).toMatchObject({ count: 1, replayed: [{ error_id: errorId }] });
    const none = ok(await cli("errors", "replay", "failing", "--all", "--code", "Timeout"));
    expect(none.stderr).toContain("nothing was replayed");
    const neither = await cli("errors", "replay", "failing");
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain("or --all");
  });

  it("maps a refused field to its line in the file, and prints YAML syntax errors with line and column", async () => {
    const tick = await cli("deploy", "flows/tick.yaml");
    expect(tick.code).toBe(1);
    expect(tick.stderr).toMatch(/^flows\/tick\.yaml:4: trigger\.intervalSeconds: .*at least 1; got 0\.$/m);

    const ref = await cli("deploy", "flows/bad-ref.yaml");
    expect(ref.code).toBe(1);
    expect(ref.stderr).toMatch(/^flows\/bad-ref\.yaml:7: steps\[0\]\.props\.x: .*reads step "later"/m);

    const code = await cli("deploy", "flows/bad-code.yaml");
    expect(code.code).toBe(1);
    // The server names this field component_code instead of steps[0].code (src/components/component-bundler.ts
    // keeps bundle.ts's field for syntax errors), so the line falls back to the top; with steps[0].code it is line 7.
    expect(code.stderr).toMatch(/^flows\/bad-code\.yaml:(1: component_code|7: steps\[0\]\.code): Syntax error at line 2, column 27/m);

    const syntax = await cli("deploy", "flows/syntax.yaml");
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toBe("flows/syntax.yaml:2:10: YAML syntax: Nested mappings are not allowed in compact mappings\n  trigger: a: b\n           ^\n");

    const unknown = await cli("deploy", "flows/unknown.yaml");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^flows\/unknown\.yaml:6: steps\[0\]\.prop: not a key of a step; did you mean props\?/m);

    const missing = await cli("deploy", "flows/missing.yaml");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^flows\/missing\.yaml:4: steps\[0\]\.code_file: no such file: \.\/steps\/nope\.ts/m);
    expect(missing.stderr).toContain(`(looked for ${join(dir, "flows", "steps", "nope.ts")}; paths are relative to the folder of flows/missing.yaml)`);

    // Nothing was created by any of them.
    const names = json(await cli("list", "workflows", "--json")).map((workflow: any) => workflow.name_slug);
    expect(names).not.toContain("tick");
    expect(names).not.toContain("bad-ref");
  });

  it("lists, describes, subscribes and deletes workflows; a name shared with a source asks for the id", async () => {
    const table = ok(await cli("list", "workflows")).stdout;
    expect(table).toMatch(new RegExp(`${greeter.id}\\s*│\\s*greeter\\s*│\\s*http\\s*│\\s*yes\\s*│\\s*2`));

    const described = ok(await cli("describe", "greeter")).stdout;
    expect(described).toMatch(new RegExp(`^workflow greeter \\(${greeter.id}\\)$`, "m"));
    expect(described).toContain(`  endpoint: ${greeter.endpoint}`);
    expect(described).toContain('         who = "{{steps.parse.$return_value}}"');
    expect(json(await cli("describe", greeter.id, "--json"))).toMatchObject({ id: greeter.id, name: "Greeter" });

    // The workflow's own trigger is listed as its, and cannot be deleted on its own.
    const sources = ok(await cli("list", "sources")).stdout;
    expect(sources).toMatch(/│\s*greeter-trigger\s*│\s*yes\s*│\s*http:\S+\s*│\s*greeter\s*│/);
    const trigger = json(await cli("describe", "greeter-trigger", "--json"));
    expect(trigger.owned_by_workflow).toMatchObject({ id: greeter.id, name_slug: "greeter" });
    const refused = await cli("delete", "greeter-trigger");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is the trigger of workflow "Greeter" (${greeter.id}) and cannot be deleted on its own: delete the workflow instead (runnel delete greeter)`);
    expect(await post(greeter.endpoint, { name: "still" })).toBe(200);

    const failing = { id: failingId };
    const subscribed = json(await cli("subscribe", "--emitter", "greeter", "--listener", "failing", "--event", "$errors", "--json"));
    expect(subscribed).toMatchObject({ emitter_id: greeter.id, listener_id: failing.id, event_name: "$errors" });
    expect(ok(await cli("subscriptions")).stdout).toMatch(new RegExp(`${greeter.id}\\s*│\\s*${failing.id}\\s*│\\s*\\$errors`));
    expect(ok(await cli("unsubscribe", "--emitter", greeter.id, "--listener", "failing", "--event", "$errors")).stdout).toContain(`Unsubscribed ${failing.id} from ${greeter.id}`);
    const left = json(await cli("subscriptions", "--json"));
    expect(left.some((item: any) => item.listener_id === failing.id && item.event_name === "$errors")).toBe(false);

    // A source named like a workflow: the name is ambiguous, the ids are not.
    await writeFile(join(dir, "failing-source.js"), 'module.exports = { name: "Failing", version: "0.1.0", async run() {} };\n');
    const source = json(await cli("deploy", "failing-source.js", "--json"));
    expect(source.name_slug).toBe("failing");
    const ambiguous = await cli("describe", "failing");
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain(`Both a source (${source.id}) and a workflow (${failing.id}) are named "failing": give the id`);
    // Without a terminal, delete asks for --yes and deletes nothing.
    const unasked = await cli("delete", failing.id);
    expect(unasked.code).toBe(1);
    expect(unasked.stderr).toContain(`Delete workflow failing (${failing.id}) with its trigger, runs and errors? There is no terminal to ask on: pass --yes to go ahead.`);
    expect(json(await cli("describe", failing.id, "--json")).id).toBe(failing.id);
    const kept = await runCliOnTerminal(["delete", failing.id], { env, cwd: dir, input: "\n" });
    expect(kept.stdout).toContain(`Delete workflow failing (${failing.id}) with its trigger, runs and errors? [y/N]: `);
    expect(kept.stdout).toContain("Nothing was deleted.");
    expect(json(await cli("describe", failing.id, "--json")).id).toBe(failing.id);
    expect(ok(await cli("delete", failing.id, "--yes")).stdout).toBe(`Deleted workflow failing (${failing.id}).\n`);
    expect(ok(await cli("delete", "failing", "-y")).stdout).toBe(`Deleted source failing (${source.id}).\n`);
    const gone = await cli("runs", failing.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("Error (NotFound)");
  });

  it("makes the subscriptions a workflow file declares, once, and refuses an emitter it cannot find before changing anything", async () => {
    const watcher = (emitter: string) =>
      `name: Watcher\nsubscriptions:\n  - emitter: ${emitter}\n    event_name: $errors\n  - emitter: ${greeter.id}\nsteps:\n  - name: a\n    code: export default defineComponent({ async run() {} })\n`;
    await writeFile(join(dir, "flows/watcher.yaml"), watcher("nobody-here"));
    const missing = await cli("deploy", "flows/watcher.yaml");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^flows\/watcher\.yaml:3: subscriptions\[0\]\.emitter: No source or workflow of yours is named "nobody-here"/m);
    expect(json(await cli("list", "workflows", "--json")).some((workflow: any) => workflow.name === "Watcher")).toBe(false);

    await writeFile(join(dir, "flows/watcher.yaml"), watcher("greeter"));
    const deployed = ok(await cli("deploy", "flows/watcher.yaml"));
    const id = /^Created workflow watcher \((p_[0-9a-z]+)\)$/m.exec(deployed.stdout)?.[1];
    expect(deployed.stdout).toContain(`Subscribed it to ${greeter.id} ($errors).`);
    expect(deployed.stdout).toContain(`Subscribed it to ${greeter.id} (default channel).`);
    const listed = async () => (JSON.parse(ok(await cli("subscriptions", "--json")).stdout) as any[]).filter((item) => item.listener_id === id).map((item) => `${item.emitter_id} ${item.event_name}`).sort();
    expect(await listed()).toEqual([`${greeter.id} $errors`, `${greeter.id} `].sort());
    // Again: nothing new to subscribe, nothing doubled.
    const again = ok(await cli("deploy", "flows/watcher.yaml", "--update"));
    expect(again.stdout).not.toContain("Subscribed");
    expect(await listed()).toEqual([`${greeter.id} $errors`, `${greeter.id} `].sort());

    await writeFile(join(dir, "flows/watcher.yaml"), "name: Watcher\nsubscriptions:\n  - emiter: failing\nsteps: []\n");
    const typo = await cli("deploy", "flows/watcher.yaml", "--update");
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/^flows\/watcher\.yaml:3: subscriptions\[0\]\.emiter: not a key of a subscription; did you mean emitter\?/m);
    ok(await cli("delete", id!, "--yes"));
  });

  it("list actions lists the published actions by key, the latest version first, and no sources", async () => {
    expect((await cli("list", "actions")).stderr).toContain("No published actions yet. Publish one with `runnel publish <file>`.");
    const action = (version: string) =>
      `export default { key: "shout-it", name: "Shout it", version: "${version}", type: "action", async run() { return "${version}"; } };\n`;
    await writeFile(join(dir, "flows/shout-it.mjs"), action("0.1.0"));
    ok(await cli("publish", "flows/shout-it.mjs"));
    await writeFile(join(dir, "flows/shout-it.mjs"), action("0.2.0"));
    ok(await cli("publish", "flows/shout-it.mjs"));
    await writeFile(join(dir, "flows/a-source.mjs"), `export default { key: "a-source", name: "A source", version: "1.0.0", async run() {} };\n`);
    ok(await cli("publish", "flows/a-source.mjs"));

    const table = ok(await cli("list", "actions"));
    expect(table.stdout).toMatch(/shout-it\s*│\s*0\.2\.0\s*│\s*\S+Z\s*│\s*0\.1\.0/);
    expect(table.stdout).not.toContain("a-source");
    expect(json(await cli("list", "actions", "--json")).map((entry: any) => `${entry.key}@${entry.version}`)).toEqual(["shout-it@0.2.0", "shout-it@0.1.0"]);
  });

  it("shows a spinner while deploying on a terminal, never when piped or with --json", async () => {
    const onTerminal = await runCliOnTerminal(["deploy", "flows/greeter.yaml", "--update"], { env, cwd: dir, input: "" });
    expect(onTerminal.code, onTerminal.stdout).toBe(0);
    expect(onTerminal.stdout).toContain("Deploying flows/greeter.yaml");
    expect(onTerminal.stdout).toMatch(/Updated workflow greeter/);
    const asJson = await runCliOnTerminal(["deploy", "flows/greeter.yaml", "--update", "--json"], { env, cwd: dir, input: "" });
    expect(asJson.code).toBe(0);
    expect(asJson.stdout).not.toContain("Deploying");
    const piped = ok(await cli("deploy", "flows/greeter.yaml", "--update"));
    expect(piped.stdout + piped.stderr).not.toContain("Deploying");
  });

  it("has --help on every workflow command", async () => {
    const commands = [["runs"], ["errors"], ["errors", "list"], ["errors", "replay"], ["subscriptions"], ["subscribe"], ["unsubscribe"]];
    const helps = await Promise.all(commands.map((args) => cli(...args, "--help")));
    helps.forEach((help, index) => {
      expect(help.code, commands[index]!.join(" ")).toBe(0);
      expect(help.stdout, commands[index]!.join(" ")).toMatch(/^Usage: runnel/);
    });
  });

  it("does not show another user's workflow, and the same file deploys as that user's own", async () => {
    const other = (...args: string[]) => runCliInProcess(args, { env: otherEnv, cwd: dir });
    for (const args of [["runs", greeter.id], ["runs", "greeter"], ["errors", greeter.id], ["describe", greeter.id], ["delete", greeter.id], ["errors", "replay", greeter.id, "--all"]]) {
      const result = await other(...args);
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr, args.join(" ")).toContain("Error (NotFound)");
    }
    const theirs = JSON.parse((await other("deploy", "flows/greeter.yaml", "--json")).stdout);
    expect(theirs.id).not.toBe(greeter.id);
    expect(theirs.trigger.endpoint_url).not.toBe(greeter.endpoint);
    // Pinning another user's id is refused at the id's line.
    await writeFile(join(dir, "flows/pinned.yaml"), `id: ${greeter.id}\n${GREETER_YAML}`);
    const pinned = await other("deploy", "flows/pinned.yaml");
    expect(pinned.code).toBe(1);
    expect(pinned.stderr).toMatch(/^flows\/pinned\.yaml:1: id: no workflow of yours has the id/m);
  });
});
