import { SqliteDatabaseClass as Database } from "../../src/store/sqlite/sqlite-binding.js";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

/** A peer that holds each `/gate/<name>` request until the test releases that name. */
class Gates {
  private server!: Server;
  private readonly waiting = new Map<string, () => void>();
  url = "";

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const name = (request.url ?? "").replace("/gate/", "");
      this.waiting.set(name, () => response.end("open"));
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  arrived(name: string): boolean {
    return this.waiting.has(name);
  }

  release(name: string): void {
    this.waiting.get(name)?.();
  }

  async close(): Promise<void> {
    for (const answer of this.waiting.values()) answer();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * A workflow that answers its HTTP caller itself gets its deliveries handed
 * over without a row (architecture.md, "Held deliveries"): the caller is
 * answered with the run's record. The runs of a batch are recorded together,
 * so a run that has ended waits a moment for its batch rather than writing a
 * delivery row only to delete it; a run held back by another of its batch
 * still gets its answer.
 */
describe("answers of runs that respond at their end", () => {
  let server: TestServer;
  let database: InstanceType<typeof Database>;
  const gates = new Gates();

  beforeAll(async () => {
    await gates.start();
    server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    // Counts the delivery rows the server writes, in the server's own SQLite file (its own connection, WAL mode).
    database = new Database(join(server.dataDir, "runnel.sqlite"));
    database.exec("CREATE TABLE test_delivery_inserts (n INTEGER); CREATE TRIGGER test_count_deliveries AFTER INSERT ON deliveries BEGIN INSERT INTO test_delivery_inserts VALUES (1); END;");
  });
  afterAll(async () => {
    database?.close();
    await server?.close();
    await gates.close();
  });

  const deliveryRowsWritten = () => (database.prepare("SELECT count(*) AS n FROM test_delivery_inserts").get() as { n: number }).n;

  const answering = (name: string) =>
    createWorkflow(server, server.adminKey, {
      name,
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        { name: "double", code: `export default defineComponent({ async run({ steps }) { return steps.trigger.event.body.n * 2; } })` },
        {
          name: "answer",
          code: `export default defineComponent({
            async run({ steps, $ }) {
              const { gate, n } = steps.trigger.event.body;
              if (gate) await fetch(${JSON.stringify(`${gates.url}/gate/`)} + gate);
              // Runs of one batch end a few milliseconds apart, as real steps do.
              else await new Promise((resolve) => setTimeout(resolve, (n % 4) * 4));
              await $.respond({ status: 200, body: { doubled: steps.double.$return_value } });
            },
          })`,
        },
      ],
    });

  const fire = async (workflow: { trigger: { endpoint_url: string } }, body: Record<string, unknown>): Promise<{ status: number; body: any }> => {
    const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: answer.status, body: await answer.json() };
  };

  it("records no delivery rows for runs under load answered at their end, and answers each caller with its own run", async () => {
    const workflow = await answering("burst");
    expect(await fire(workflow, { n: 0 })).toEqual({ status: 200, body: { doubled: 0 } });
    const before = deliveryRowsWritten();
    // 32 callers, each sending its next request as soon as it has its answer (as a load generator does).
    const answers: Array<{ status: number; body: any }> = [];
    await Promise.all(
      Array.from({ length: 32 }, async (_, caller) => {
        for (let n = caller + 1; n <= 256; n += 32) answers[n - 1] = await fire(workflow, { n });
      }),
    );
    expect(answers).toEqual(Array.from({ length: 256 }, (_, n) => ({ status: 200, body: { doubled: (n + 1) * 2 } })));
    // Each run answered with its record: 0–3 rows on a quiet machine, 19 on a loaded one (a batch slower than the
    // wait writes some), where runs whose batch was still out wrote and deleted one each before (54 of these 256).
    expect(deliveryRowsWritten() - before).toBeLessThanOrEqual(32);
    const listed = await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=1`, { key: server.adminKey });
    expect(listed.body.page_info.total_count).toBe(257);
  });

  it("answers a run that has ended while another run of its batch is still held, and records the held one when it ends", async () => {
    const workflow = await answering("mixed");
    // Four runs held at their gates take the worker's four slots; the next two queue, and run together when one frees.
    const held = ["h1", "h2", "h3", "h4"].map((gate, n) => fire(workflow, { n, gate }));
    for (const gate of ["h1", "h2", "h3", "h4"]) await waitFor(async () => gates.arrived(gate), Boolean, `the run at gate ${gate}`);
    const quick = fire(workflow, { n: 21 });
    const slow = fire(workflow, { n: 22, gate: "slow" });
    gates.release("h1");
    expect(await quick).toEqual({ status: 200, body: { doubled: 42 } });
    await waitFor(async () => gates.arrived("slow"), Boolean, "the slow run at its gate");
    for (const gate of ["h2", "h3", "h4", "slow"]) gates.release(gate);
    expect(await slow).toEqual({ status: 200, body: { doubled: 44 } });
    expect((await Promise.all(held)).map((answer) => answer.body.doubled)).toEqual([0, 2, 4, 6]);
    const runs = await waitFor(() => runsOf(server, server.adminKey, workflow.id), (list) => list.length === 6, "the six runs");
    expect(runs.every((run) => run.status === "success")).toBe(true);
  });
});
