import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, type CliResult } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, waitFor } from "../workflows/helpers.js";

/** `runnel runs` shows a delayed run with when it resumes; `runnel runs cancel` cancels it, and refuses an ended one. */
describe("runnel runs cancel against a real server", () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  const cli = (...args: string[]): Promise<CliResult> => runCliInProcess(args, { env, cwd: dir });

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(join(tmpdir(), "runnel-cli-cancel-"));
    key = (await createUser(server, "canceller")).key;
    env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: key, HOME: dir, XDG_CONFIG_HOME: dir };
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("shows a delayed run, cancels it, then says it has ended", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Waiter",
      steps: [
        { name: "wait", code: `export default defineComponent({ async run({ $ }) { $.flow.delay(600000); return 1; } })` },
        { name: "after", code: `export default defineComponent({ async run() { return 2; } })` },
      ],
    });
    const queued = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: {} });
    const runId = queued.body.data.run_id as string;
    const waiting = await waitFor(() => call(server.url, "GET", `/v1/runs/${runId}`, { key }), (answer) => answer.status === 200 && answer.body.data.status === "delayed", "the delayed run");
    const resumesAt = new Date(waiting.body.data.next_attempt_at_ms).toISOString();

    const table = await cli("runs", "waiter");
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(`delayed (resumes at ${resumesAt})`);
    const detail = await cli("runs", runId);
    expect(detail.stdout).toContain(`  resumes:   ${resumesAt} ($.flow.delay or $.flow.rerun; cancel with \`runnel runs cancel ${runId}\`)`);

    const cancelled = await cli("runs", "cancel", runId);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout.trim()).toBe(`${runId} cancelled: it will not resume.`);
    const me = (await call(server.url, "GET", "/v1/users/me", { key })).body.data;
    expect((await cli("runs", runId)).stdout).toContain(`by ${me.id}`);

    const again = await cli("runs", "cancel", runId);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain("has ended already (cancelled)");
  });
});
