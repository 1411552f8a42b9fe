import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

// Workflows on the scale-out store: claims through FOR UPDATE SKIP LOCKED, runs and errors through Kysely.
const schema = `runnel_wf_${randomBytes(5).toString("hex")}`;
let admin: pg.Client;
let server: TestServer;
let key: string;

beforeAll(async () => {
  await requirePostgres();
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  server = await startTestServer({ DATABASE_URL: `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}` });
  key = (await createUser(server, "pat")).key;
});
afterAll(async () => {
  await server?.close();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
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
});
