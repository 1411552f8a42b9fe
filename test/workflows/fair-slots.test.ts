import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

/** A peer that holds every request until released: the steps of one owner that wait on a slow API. */
class SlowApi {
  private server!: Server;
  private readonly waiting: Array<() => void> = [];
  arrived = 0;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((_request, response) => {
      this.arrived++;
      this.waiting.push(() => response.end("late"));
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  release(): void {
    for (const answer of this.waiting.splice(0)) answer();
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * The worker runs batches of runs side by side; one owner may hold only a few
 * of its slots. An owner whose every run waits on a slow API must not stop
 * the other owners' runs (before, four such batches took all four slots and
 * every other workflow on the server waited for them).
 */
describe("the worker's slots, shared among owners", () => {
  let server: TestServer;
  const api = new SlowApi();

  beforeAll(async () => {
    await api.start();
    server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
  });
  afterAll(async () => {
    await api.close();
    await server?.close();
  });

  it("runs another owner's workflow while one owner's runs all wait, and holds that owner to its own share", async () => {
    const slow = await createUser(server, "slowpoke");
    const other = await createUser(server, "bystander");
    const waiting = await createWorkflow(server, slow.key, {
      name: "Waits on a slow API",
      trigger: { type: "http" },
      steps: [{ name: "call", code: `export default defineComponent({ async run() { return (await fetch(${JSON.stringify(api.url)})).text(); } })` }],
    });
    const quick = await createWorkflow(server, other.key, {
      name: "Quick",
      trigger: { type: "http" },
      steps: [{ name: "answer", code: `export default defineComponent({ async run({ steps }) { return steps.trigger.event.body.n; } })` }],
    });
    const post = (workflow: { trigger: { endpoint_url: string } }, n: number) =>
      fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) }).then((answer) => answer.status);

    // One request at a time, each its own batch: the slow owner's first four take its four slots.
    for (let n = 1; n <= 6; n++) {
      expect(await post(waiting, n)).toBe(200);
      if (n <= 4) await waitFor(async () => api.arrived, (arrived) => arrived >= n, `slow run ${n} at the API`);
    }
    expect(await post(quick, 7)).toBe(200);
    const quickRuns = await waitFor(() => runsOf(server, other.key, quick.id), (runs) => runs.length === 1, "the other owner's run, while the slow ones wait");
    expect(quickRuns[0]).toMatchObject({ status: "success" });
    // The slow owner's fifth and sixth runs wait for a slot of its own: still four calls at the API.
    expect(api.arrived).toBe(4);
    expect(await runsOf(server, slow.key, waiting.id)).toEqual([]);

    api.release();
    await waitFor(async () => api.arrived, (arrived) => arrived === 6, "the slow owner's last two runs at the API");
    api.release();
    const slowRuns = await waitFor(() => runsOf(server, slow.key, waiting.id), (runs) => runs.length === 6, "all six slow runs");
    expect(slowRuns.every((run: { status: string }) => run.status === "success")).toBe(true);
  });
});
