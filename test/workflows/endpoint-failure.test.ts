import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow } from "./helpers.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "rhea")).key;
});
afterAll(() => server.close());

async function post(url: string, body: unknown): Promise<{ status: number; body: any; text: string }> {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await answer.text();
  return { status: answer.status, body: JSON.parse(text), text };
}

describe("the public endpoint of a workflow that responds itself, when the workflow does not answer", () => {
  it("answers a failed run with a 502 naming the workflow and the step, and an error id under which the owner finds the message and stack", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Order Intake",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        { name: "validate", code: "export default defineComponent({ async run() { return 1; } })" },
        { name: "charge_card", code: "export default defineComponent({ async run() { throw new Error('db password is hunter2 at 10.0.0.5'); } })" },
      ],
    });
    const failed = await post(workflow.trigger.endpoint_url, { order: 1 });
    expect(failed.status).toBe(502);
    expect(failed.body.error.code).toBe("SourceFailed");
    expect(failed.body.error.message).toMatch(/^Workflow "Order Intake" failed in step "charge_card" and did not answer; its owner finds the details under error id run_\S+ \(runnel runs run_\S+\)\.$/);
    // Nothing of the step's message or stack reaches the anonymous caller.
    expect(failed.text).not.toContain("hunter2");
    expect(failed.text).not.toContain("10.0.0.5");
    expect(failed.text).not.toMatch(/\bat \S+ \(/);
    const errorId: string = failed.body.error.details.error_id;
    expect(failed.body.error.details).toEqual({ error_id: errorId, workflow: "Order Intake", step: "charge_card" });

    // The owner finds it all under that id: the run, and the $errors event whose emit_id it is.
    const run = await call(server.url, "GET", `/v1/runs/${errorId}`, { key });
    expect(run.status).toBe(200);
    expect(run.body.data).toMatchObject({ id: errorId, workflow_id: workflow.id, status: "error", error: { code: "UserError", msg: "db password is hunter2 at 10.0.0.5", cellId: workflow.steps[1].id } });
    const errors = await call(server.url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries?expand=event`, { key });
    expect(errors.body.data.map((item: any) => item.metadata.emit_id)).toContain(errorId);
    // Another user cannot read it by that id.
    const stranger = (await createUser(server, "snoop")).key;
    expect((await call(server.url, "GET", `/v1/runs/${errorId}`, { key: stranger })).status).toBe(404);
  });

  it("answers a run that ended without $.respond with a 502 naming the workflow and the run's id", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Forgetful",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [{ name: "noop", code: "export default defineComponent({ async run() { return 'done'; } })" }],
    });
    const unanswered = await post(workflow.trigger.endpoint_url, {});
    expect(unanswered.status).toBe(502);
    expect(unanswered.body.error.message).toContain('Workflow "Forgetful" finished without calling $.respond({ status, body })');
    expect(unanswered.body.error.details).toEqual({ error_id: expect.stringMatching(/^run_/), workflow: "Forgetful" });
  });
});
