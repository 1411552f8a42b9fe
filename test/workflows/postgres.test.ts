import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSchema } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

// Workflows on the scale-out store: claims through FOR UPDATE SKIP LOCKED, runs and errors through Kysely.
let pgSchema: Awaited<ReturnType<typeof createTestSchema>>;
let server: TestServer;
let key: string;

beforeAll(async () => {
  pgSchema = await createTestSchema("runnel_wf");
  server = await startTestServer({
    DATABASE_URL: pgSchema.databaseUrl,
    RUNNEL_EGRESS_ALLOW: "127.0.0.1",
    RUNNEL_SEND_MAX_ATTEMPTS: "3",
    RUNNEL_SEND_RETRY_BASE_MS: "50",
  });
  key = (await createUser(server, "pat")).key;
});
afterAll(async () => {
  await server?.close();
  await pgSchema?.drop();
});

describe("workflows on PostgreSQL", () => {
  it("runs, responds, records runs and lists errors", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "On PG",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        { name: "check", code: "export default defineComponent({ run({ steps }) { if (steps.trigger.event.body.fail) throw new Error('asked to fail'); return steps.trigger.event.body.n; } })" },
        { name: "reply", code: "export default defineComponent({ async run({ steps, $ }) { await $.respond({ status: 200, body: { n: steps.check.$return_value } }); } })" },
      ],
    });
    const answers = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
        return { status: answer.status, body: await answer.json() };
      }),
    );
    expect(answers).toEqual([1, 2, 3].map((n) => ({ status: 200, body: { n } })));
    const failed = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ fail: true }) });
    expect(failed.status).toBe(502);
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (list) => list.length === 4, "four runs");
    expect(runs.map((run) => run.status).sort()).toEqual(["error", "success", "success", "success"]);
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the error");
    expect(errors.data[0].event.error).toMatchObject({ code: "UserError", msg: "asked to fail", cellId: workflow.steps[0].id });
    const outbox = await waitFor(() => call(server.url, "GET", "/v1/outbox", { key }), (res) => res.body.data?.length === 1, "the error mail");
    expect(outbox.body.data[0].subject).toContain("asked to fail");
  });

  it("carries out $.send.http from the send outbox, trying again with the same key, and gives up a dead destination as a DestinationFailed error", async () => {
    const receiver = await startWebhookReceiver({ failFirst: 1 });
    const refused = await startWebhookReceiver({ alwaysFail: true });
    try {
      const workflow = await createWorkflow(server, key, {
        name: "Sends on PG",
        trigger: { type: "http" },
        steps: [
          {
            name: "send",
            code: `export default defineComponent({ run({ steps, $ }) {
              $.send.http({ method: "POST", url: ${JSON.stringify(receiver.url)}, data: { n: steps.trigger.event.body.n } });
              $.send.http({ method: "POST", url: ${JSON.stringify(refused.url)}, data: { n: steps.trigger.event.body.n } });
            } })`,
          },
        ],
      });
      await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":7}' });
      const [run] = await waitFor(() => runsOf(server, key, workflow.id), (list) => list.length === 1, "the run");
      const settled = await waitFor(
        () => call(server.url, "GET", `/v1/runs/${run.id}`, { key }),
        (res) => res.body.data.steps[0].sends.every((send: any) => send.status !== "pending"),
        "both sends settled",
      );
      expect(settled.body.data.steps[0].sends.map((send: any) => send.status)).toEqual(["delivered", "failed"]);
      expect(receiver.received.map((request) => [request.headers["idempotency-key"], request.answered])).toEqual([
        [`${run.id}:0:0`, 500],
        [`${run.id}:0:0`, 200],
      ]);
      expect(refused.received.map((request) => request.headers["idempotency-key"])).toEqual([`${run.id}:0:1`, `${run.id}:0:1`, `${run.id}:0:1`]);
      const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the DestinationFailed error");
      expect(errors.data[0].event.error).toMatchObject({ code: "DestinationFailed", cellId: workflow.steps[0].id });
      expect(errors.data[0].event.original_event.body).toEqual({ n: 7 });
    } finally {
      await receiver.close();
      await refused.close();
    }
  });
});

describe("stores on PostgreSQL", () => {
  it("keeps a step's $.service.db across runs, merges concurrent runs key by key, and serves data_store records with TTLs", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Stateful on PG",
      trigger: { type: "http" },
      steps: [
        {
          name: "count",
          props: { store: "pg-shared" },
          code: `export default defineComponent({
            props: { db: "$.service.db", store: { type: "data_store" } },
            async run({ steps }) {
              this.db.set("run-" + steps.trigger.event.body.n, true);
              await this.store.set("last-" + steps.trigger.event.body.n, steps.trigger.event.body.n, { ttl: steps.trigger.event.body.ttl });
              return (await this.store.keys()).length;
            },
          })`,
        },
      ],
    });
    const post = (body: unknown) => fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((answer) => answer.text());
    await Promise.all([1, 2, 3].map((n) => post({ n, ttl: 3600 })));
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 3, "three runs");
    expect(runs.map((run) => run.status), JSON.stringify(runs.map((run) => run.error))).toEqual(["success", "success", "success"]);
    const rows = await pgSchema.admin.query(`SELECT key FROM ${pgSchema.schema}.step_store_entries WHERE workflow_id = $1 ORDER BY key`, [workflow.id]);
    expect(rows.rows.map((row) => row.key)).toEqual(["run-1", "run-2", "run-3"]);

    const records = await call(server.url, "GET", "/v1/data_stores/pg-shared/records", { key });
    expect(records.body.data.map((record: any) => [record.key, record.value])).toEqual([["last-1", 1], ["last-2", 2], ["last-3", 3]]);
    expect((await call(server.url, "PUT", "/v1/data_stores/pg-shared/records/brief", { key, json: { value: "x", ttl: 0.5 } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await call(server.url, "GET", "/v1/data_stores/pg-shared/records/brief", { key })).status).toBe(404);
    expect((await call(server.url, "GET", "/v1/data_stores", { key })).body.data).toEqual([expect.objectContaining({ name: "pg-shared", key_count: 3 })]);

    expect((await call(server.url, "DELETE", `/v1/workflows/${workflow.id}`, { key })).status).toBe(204);
    expect((await pgSchema.admin.query(`SELECT count(*)::int AS n FROM ${pgSchema.schema}.step_store_entries WHERE workflow_id = $1`, [workflow.id])).rows[0].n).toBe(0);
    expect((await call(server.url, "DELETE", "/v1/data_stores/pg-shared", { key })).status).toBe(204);
  });
});
