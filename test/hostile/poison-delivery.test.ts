import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type RunningChild } from "../helpers/child.js";
import { freePort } from "../helpers/ports.js";
import { call } from "../helpers/server.js";
import { waitFor } from "../workflows/helpers.js";

/**
 * A delivery whose run takes its process down every time (here: the server
 * is SIGKILLed while the run waits at the test's gate, as a run that crashed
 * the server would) must not be run at every start forever: after
 * RUNNEL_MAX_RUN_INTERRUPTIONS (3) it becomes one `$errors` entry of its
 * workflow, kept for replay, and the server starts cleanly and serves.
 */
const LISTENING = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/;

let dataDir: string;
let gate: Server;
let gateUrl: string;
let arrivals = 0;
let open = false;
const held: Array<() => void> = [];
const children: RunningChild[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "runnel-poison-"));
  gate = createServer((_request, response) => {
    arrivals += 1;
    if (open) return response.end("open");
    held.push(() => response.end("open"));
  });
  await new Promise<void>((resolve) => gate.listen(0, "127.0.0.1", resolve));
  gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const child of children) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill("SIGKILL");
  for (const release of held.splice(0)) release();
  gate.closeAllConnections();
  gate.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(port: number): Promise<string> {
  const child = startCli(["server"], {
    cwd: dataDir,
    env: { RUNNEL_DATA_DIR: dataDir, RUNNEL_PORT: String(port), RUNNEL_HOST: "127.0.0.1", RUNNEL_RATE_LIMIT_PER_MINUTE: "0", RUNNEL_LOG_FORMAT: "json", RUNNEL_EGRESS_ALLOW: "127.0.0.1" },
  });
  children.push(child);
  const [, url] = await child.waitFor(LISTENING, 30_000);
  return url!;
}

async function killLast(): Promise<void> {
  const last = children[children.length - 1]!;
  last.child.kill("SIGKILL");
  await last.exited;
}

describe("a delivery that takes its server down every time", () => {
  // Four starts of the real server binary: seconds each when the machine is busy (as on CI, two files at once).
  it("is run three times, then recorded once as a RepeatedCrash error, replayable; every start is clean", { timeout: 90_000 }, async () => {
    const port = await freePort();
    let url = await start(port);
    const adminKey = (await readFile(join(dataDir, "admin-api-key"), "utf8")).trim();
    const created = await call(url, "POST", "/v1/workflows", {
      key: adminKey,
      json: {
        name: "Poison",
        trigger: { type: "http" },
        respond: "immediately",
        steps: [{ name: "wait", code: `export default defineComponent({ async run({ steps }) { await fetch(${JSON.stringify(`${gateUrl}/gate`)}); return steps.trigger.event.body.n; } })` }],
      },
    });
    expect(created.status).toBe(200);
    const workflow = created.body.data;
    const accepted = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":7}' });
    expect(accepted.status).toBe(200);

    for (let attempt = 1; attempt <= 3; attempt++) {
      await waitFor(async () => arrivals, (count) => count >= attempt, `attempt ${attempt} at the gate`);
      await killLast();
      url = await start(port);
      expect((await call(url, "GET", "/healthz")).status).toBe(200);
    }

    const errors = await waitFor(
      () => call(url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries?expand=event`, { key: adminKey }),
      (response) => response.body.data.length > 0,
      "the RepeatedCrash error",
    );
    expect(errors.body.data).toHaveLength(1);
    const entry = errors.body.data[0];
    expect(entry.event.error.code).toBe("RepeatedCrash");
    expect(entry.event.error.msg ?? entry.event.error.message).toContain("cut off 3 times");
    expect(entry.event.original_event.body).toEqual({ n: 7 });
    // Not run a fourth time.
    expect(arrivals).toBe(3);
    const runs = await call(url, "GET", `/v1/workflows/${workflow.id}/runs`, { key: adminKey });
    expect(runs.body.data).toMatchObject([{ status: "error" }]);
    // Logged once, for the operator.
    const logged = children[children.length - 1]!.stdout().split("\n").filter((line) => line.includes("kept taking its process down"));
    expect(logged).toHaveLength(1);

    // Once the cause is gone, the replay runs it.
    open = true;
    for (const release of held.splice(0)) release();
    const replayed = await call(url, "POST", `/v1/workflows/${workflow.id}/$errors/${entry.id}/replay`, { key: adminKey });
    expect(replayed.status).toBe(202);
    const after = await waitFor(
      () => call(url, "GET", `/v1/workflows/${workflow.id}/runs`, { key: adminKey }),
      (response) => response.body.data.some((run: { status: string }) => run.status === "success"),
      "the replayed run",
    );
    expect(after.body.data.find((run: { status: string }) => run.status === "success").steps[0].$return_value).toBe(7);
    children[children.length - 1]!.child.kill("SIGTERM");
    expect((await children[children.length - 1]!.exited).code).toBe(0);
  });
});
