import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, type CliResult } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "../workflows/helpers.js";

/** `runnel errors replay --from failed-step --with-code …` against a real server, and how `runnel runs <id>` shows such a replay. */

const COUNT = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps, $ }) {
    const runs = ((await this.store.get("count-" + steps.trigger.event.tag)) ?? 0) + 1;
    await this.store.set("count-" + steps.trigger.event.tag, runs);
    return { runs };
  },
})`;
const FLAGGED = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps }) {
    if (await this.store.get("broken")) throw new Error("the flag is set");
    return { runs: steps.count.$return_value.runs };
  },
})`;

describe("runnel errors replay from the failed step", () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  const cli = (...args: string[]): Promise<CliResult> => runCliInProcess(args, { env, cwd: dir });

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-replay-"));
    key = (await createUser(server, "cleo")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const setFlag = async (broken: boolean) => expect((await call(server.url, "PUT", "/v1/data_stores/cli-replay/records/broken", { key, json: { value: broken } })).status).toBe(200);

  it("replays one error from its failed step (the earlier step is not run again), refuses bad values, and lists what --all could not replay", async () => {
    await setFlag(true);
    const steps = [
      { name: "count", code: COUNT, props: { store: "cli-replay" } },
      { name: "flagged", code: FLAGGED, props: { store: "cli-replay" } },
    ];
    const workflow = await createWorkflow(server, key, { name: "Cli replay", steps });
    for (const tag of ["a", "b"]) await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: { event: { tag } } });
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 2, "two errors");
    const [first, second] = errors.data;
    await setFlag(false);

    const bad = await cli("errors", "replay", "cli-replay", first.id, "--from", "middle");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--from must be trigger (the whole workflow again, the default) or failed-step");
    const badCode = await cli("errors", "replay", "cli-replay", first.id, "--with-code", "old");
    expect(badCode.code).toBe(1);
    expect(badCode.stderr).toContain("--with-code must be current");

    const replayed = await cli("errors", "replay", "cli-replay", first.id, "--from", "failed-step", "--with-code", "failed-run");
    expect(replayed.code, replayed.stderr).toBe(0);
    const eventId = new RegExp(`^Replayed ${first.id} from its failed step \\(event (\\S+)\\)$`, "m").exec(replayed.stdout)?.[1];
    expect(eventId, replayed.stdout).toBeDefined();
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (listed) => listed.some((run) => run.trigger.event_id === eventId), "the replay");
    const run = runs.find((listed) => listed.trigger.event_id === eventId);
    expect(run.status).toBe("success");
    const tag = first.event.original_event.tag;
    expect((await call(server.url, "GET", `/v1/data_stores/cli-replay/records/count-${tag}`, { key })).body.data.value).toBe(1);
    const detail = (await cli("runs", run.id)).stdout;
    expect(detail).toContain(`  replay of: ${first.id} (from its failed step)`);
    expect(detail).toContain("  version:   1");
    expect(detail).toMatch(/^ {2}1\. count \(c_[0-9a-z]+\) {2}success {2}.*\(reused from the failed run, not run again\)$/m);
    expect(detail).not.toMatch(/^ {2}2\. flagged .*reused/m);

    // The versions: one per save, the current one marked.
    const table = await cli("versions", "cli-replay");
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/1 \(current\)\s*│\s*\S+Z\s*│\s*count, flagged/);
    expect(table.stderr).toContain("--with-code failed-run");

    // The failed step renamed away: --all from the failed step replays nothing, and says why for each.
    const renamed = steps.map((step) => (step.name === "flagged" ? { ...step, name: "checked" } : step));
    expect((await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: renamed } })).status).toBe(200);
    const versions = JSON.parse((await cli("versions", "cli-replay", "--json")).stdout);
    expect(versions.map((version: any) => [version.version, version.current, version.steps.map((step: any) => step.name)])).toEqual([
      [2, true, ["count", "checked"]],
      [1, false, ["count", "flagged"]],
    ]);
    const all = await cli("errors", "replay", "cli-replay", "--all", "--from", "failed-step", "--json");
    expect(all.code, all.stderr).toBe(0);
    const answer = JSON.parse(all.stdout);
    expect(answer.count).toBe(0);
    expect(answer.not_replayed.map((item: any) => item.error_id).sort()).toEqual([first.id, second.id].sort());
    const text = await cli("errors", "replay", "cli-replay", second.id, "--from", "failed-step");
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('The failed step "flagged" is no longer in the workflow\'s current code');
  });
});
