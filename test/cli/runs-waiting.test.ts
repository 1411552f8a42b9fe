import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, type CliResult } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, waitFor } from "../workflows/helpers.js";

/** `runnel runs waiting <workflow>` lists the events waiting at its gate; `runnel runs cancel --waiting <event> --workflow <workflow>` cancels one. */
describe("runnel runs waiting and runs cancel --waiting against a real server", () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  const cli = (...args: string[]): Promise<CliResult> => runCliInProcess(args, { env, cwd: dir });

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-waiting-"));
    key = (await createUser(server, "liner")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists the waiting events in order, cancels one, and refuses one that is not waiting", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Queue",
      trigger: { type: "http" },
      steps: [{ name: "sleep", code: `export default defineComponent({ async run({ steps }) { await new Promise((resolve) => setTimeout(resolve, steps.trigger.event.body.n === 0 ? 5000 : 100)); return 1; } })` }],
      settings: { concurrency: 1 },
    });
    expect((await cli("runs", "waiting", "queue")).stderr).toContain("Nothing waits at the gate of queue.");
    for (let n = 0; n < 4; n += 1) {
      const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      expect(answer.status).toBe(200);
    }
    const events = (await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}/event_summaries?expand=event`, { key })).body.data as any[];
    const eventOf = (n: number): string => events.find((event) => event.event.body.n === n).id;

    const listed = await cli("runs", "waiting", "queue");
    expect(listed.code, listed.stderr).toBe(0);
    // In line order: each row's position, then its event.
    for (const [position, n] of [[1, 1], [2, 2], [3, 3]] as const) expect(listed.stdout).toMatch(new RegExp(`${position}\\s*│\\s*${eventOf(n)}`));
    const order = [1, 2, 3].map((n) => listed.stdout.indexOf(eventOf(n)));
    expect(order.every((at) => at > 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(listed.stdout).not.toContain(eventOf(0));
    expect(listed.stderr).toContain("runnel runs cancel --waiting <event id> --workflow queue");
    const short = await cli("runs", "waiting", "queue", "-n", "2");
    expect(short.stderr).toContain("And 1 more");
    const json = await cli("runs", "waiting", workflow.id, "--json");
    expect(JSON.parse(json.stdout).map((item: any) => [item.event_id, item.position])).toEqual([
      [eventOf(1), 1],
      [eventOf(2), 2],
      [eventOf(3), 3],
    ]);

    const cancelled = await cli("runs", "cancel", "--waiting", eventOf(2), "--workflow", "queue");
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(new RegExp(`^${eventOf(2)} cancelled: it left the line of queue and will not run \\(its run run_\\S+ is recorded cancelled\\)\\.`));
    const again = await cli("runs", "cancel", "--waiting", eventOf(2), "--workflow", "queue");
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`${eventOf(2)} is not waiting`);
    expect(again.stderr).toContain("POST /v1/runs/<run id>/cancel");
    const noWorkflow = await cli("runs", "cancel", "--waiting", eventOf(3));
    expect(noWorkflow.code).not.toBe(0);
    expect(noWorkflow.stderr).toContain("--waiting needs --workflow");
    const neither = await cli("runs", "cancel");
    expect(neither.code).not.toBe(0);
    expect(neither.stderr).toContain("Give the run to cancel");

    const runs = await waitFor(() => call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=10`, { key }), (answer) => answer.body.data.filter((run: any) => run.status === "success").length === 3, "three runs and the cancelled one", 20_000);
    const statuses = Object.fromEntries(runs.body.data.map((run: any) => [run.trigger.event_id, run.status]));
    expect(statuses).toEqual({ [eventOf(0)]: "success", [eventOf(1)]: "success", [eventOf(2)]: "cancelled", [eventOf(3)]: "success" });
  }, 40_000);
});
