import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "alice")).key;
});
afterAll(() => server.close());

describe("smoke", () => {
  it("runs an HTTP workflow of three steps whose last responds", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Greeter",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        { name: "parse", code: "export default defineComponent({ async run({ steps }) { return steps.trigger.event.body.name; } })" },
        { name: "shout", code: "export default defineComponent({ props: { who: { type: 'string' } }, async run({ $ }) { $.export('$summary', 'shouted'); return this.who.toUpperCase(); } })", props: { who: "{{steps.parse.$return_value}}" } },
        { name: "reply", code: "export default defineComponent({ async run({ steps, $ }) { await $.respond({ status: 201, body: { hello: steps.shout.$return_value } }); } })" },
      ],
    });
    expect(workflow.id).toMatch(/^p_/);
    const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "bob" }) });
    expect(answer.status).toBe(201);
    expect(await answer.json()).toEqual({ hello: "BOB" });
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    expect(runs[0]).toMatchObject({ status: "success", steps: [{ name: "parse", $return_value: "bob" }, { name: "shout", summary: "shouted", $return_value: "BOB" }, { name: "reply" }] });
  });

  it("gives workflows of one name created at the same time a slug each, rather than refusing all but one", async () => {
    const body = { name: "Same Name", trigger: { type: "http" }, steps: [{ name: "noop", code: "export default defineComponent({ async run() { return 1; } })" }] };
    const answers = await Promise.all([1, 2, 3, 4].map(() => call(server.url, "POST", "/v1/workflows", { key, json: body })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.body.data.name_slug)).size).toBe(4);
  });

  it("lists an error and mails it to the outbox", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Failing",
      trigger: { type: "http" },
      steps: [{ name: "boom", code: "export default defineComponent({ async run() { throw new Error('kaput'); } })" }],
    });
    const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", body: "x" });
    expect(answer.status).toBe(200);
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the error");
    expect(errors.data[0].event.error).toMatchObject({ code: "UserError", msg: "kaput", cellId: workflow.steps[0].id });
    const outbox = await waitFor(() => call(server.url, "GET", "/v1/outbox", { key }), (res) => res.body.data?.length === 1, "the mail");
    expect(outbox.body.data[0].subject).toContain("kaput");
  });

  it("names the step whose code does not compile", async () => {
    const refused = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Broken", trigger: { type: "http" }, steps: [{ name: "ok", code: "export default { run() {} }" }, { name: "bad", code: "export default { run() { return ( } }" }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("steps[1].code");
    expect(refused.body.error.message).toMatch(/Syntax error.*line 1/);
  });

  it("keeps the global error workflow: it cannot be deleted", async () => {
    const listed = await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key });
    const errorWorkflow = listed.body.data.find((workflow: { is_error_workflow: boolean }) => workflow.is_error_workflow);
    expect(errorWorkflow).toBeDefined();
    const refused = await call(server.url, "DELETE", `/v1/workflows/${errorWorkflow.id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/cannot be deleted/);
  });

  it("refuses to replay into a paused workflow, where the replay would be dropped", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Paused",
      trigger: { type: "http" },
      steps: [{ name: "boom", code: "export default defineComponent({ async run() { throw new Error('no'); } })" }],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", body: "x" });
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the error");
    expect((await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { active: false } })).status).toBe(200);
    const refused = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/${errors.data[0].id}/replay`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/paused/);
  });

  it("renames its own trigger with it", async () => {
    const workflow = await createWorkflow(server, key, { name: "Before", trigger: { type: "http" }, steps: [{ name: "a", code: "export default { run() {} }" }] });
    expect((await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key })).body.data.name).toBe("Before trigger");
    const renamed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { name: "After" } });
    expect(renamed.body.data).toMatchObject({ name: "After", name_slug: "after", trigger: { source_id: workflow.trigger.source_id, endpoint_url: workflow.trigger.endpoint_url } });
    expect((await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key })).body.data.name).toBe("After trigger");
  });
});
