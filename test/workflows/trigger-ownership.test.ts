import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "tess")).key;
});
afterAll(() => server.close());

const STEP = { name: "echo", code: "export default defineComponent({ async run({ steps }) { return steps.trigger.event.body; } })" };

describe("a workflow's own trigger belongs to the workflow", () => {
  it("is listed as the workflow's, refuses changes and deletion through the sources' routes with a 409 naming the workflow, and goes with the workflow", async () => {
    const workflow = await createWorkflow(server, key, { name: "Owned Hook", trigger: { type: "http" }, steps: [STEP] });
    const triggerId: string = workflow.trigger.source_id;
    expect(triggerId).toMatch(/^dc_/);

    const listed = await call(server.url, "GET", "/v1/users/me/sources", { key });
    const entry = listed.body.data.find((source: any) => source.id === triggerId);
    expect(entry.owned_by_workflow).toEqual({ id: workflow.id, name: "Owned Hook", name_slug: workflow.name_slug });
    const single = await call(server.url, "GET", `/v1/sources/${triggerId}`, { key });
    expect(single.body.data.owned_by_workflow.id).toBe(workflow.id);

    const deleted = await call(server.url, "DELETE", `/v1/sources/${triggerId}`, { key });
    expect(deleted.status).toBe(409);
    expect(deleted.body.error.code).toBe("Conflict");
    expect(deleted.body.error.message).toContain('workflow "Owned Hook"');
    expect(deleted.body.error.message).toContain(workflow.id);
    expect(deleted.body.error.details).toMatchObject({ workflow_id: workflow.id, workflow_name: "Owned Hook" });

    const renamed = await call(server.url, "PUT", `/v1/sources/${triggerId}`, { key, json: { name: "hijacked" } });
    expect(renamed.status).toBe(409);
    expect(renamed.body.error.message).toContain('workflow "Owned Hook"');
    const paused = await call(server.url, "PUT", `/v1/sources/${entry.name_slug}`, { key, json: { active: false } });
    expect(paused.status).toBe(409);

    // Nothing changed: the endpoint still runs the workflow.
    const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 1 }) });
    expect(answer.status).toBe(200);
    await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    expect((await call(server.url, "GET", `/v1/sources/${triggerId}`, { key })).body.data).toMatchObject({ active: true, name: entry.name });

    // The workflow itself may still change its trigger (a rename renames it), and deleting the workflow deletes it.
    const updated = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { name: "Owned Hook Two" } });
    expect(updated.status).toBe(200);
    expect((await call(server.url, "GET", `/v1/sources/${triggerId}`, { key })).body.data.name).toBe("Owned Hook Two trigger");
    expect((await call(server.url, "DELETE", `/v1/workflows/${workflow.id}`, { key })).status).toBe(204);
    expect((await call(server.url, "GET", `/v1/sources/${triggerId}`, { key })).status).toBe(404);
  });

  it("leaves a source that a workflow only listens to (trigger source_id) the user's to change and delete", async () => {
    const source = await call(server.url, "POST", "/v1/sources", {
      key,
      json: { name: "shared hook", component_code: "module.exports = { name: 'hook', version: '1.0.0', props: { http: '$.interface.http' }, async run(e) { this.$emit(e.body); } };" },
    });
    expect(source.status).toBe(200);
    const workflow = await createWorkflow(server, key, { name: "Listener", trigger: { source_id: source.body.data.id }, steps: [STEP] });
    expect((await call(server.url, "GET", `/v1/sources/${source.body.data.id}`, { key })).body.data.owned_by_workflow).toBeNull();
    expect((await call(server.url, "PUT", `/v1/sources/${source.body.data.id}`, { key, json: { name: "shared hook 2" } })).status).toBe(200);
    expect((await call(server.url, "DELETE", `/v1/sources/${source.body.data.id}`, { key })).status).toBe(204);
    expect((await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key })).status).toBe(200);
  });
});
