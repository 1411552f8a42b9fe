import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf } from "../helpers/sources.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

/**
 * What triggers a workflow: an inline timer, an existing source, an inline
 * source component; and what updates, deactivation and deletion do to it.
 */

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "trigger")).key;
});
afterAll(() => server.close());

const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** A step that returns what it saw of the trigger. */
const SEE_TRIGGER = {
  name: "see",
  code: "export default defineComponent({ run({ steps }) { return { event: steps.trigger.event, source_type: steps.trigger.context.source_type, context_id: steps.trigger.context.id }; } })",
};

/** An HTTP source whose run emits its own event (not the request itself). */
const EMITTING_SOURCE = `export default {
  name: "Order hook", version: "1.0.0",
  props: { http: { type: "$.interface.http" }, label: { type: "string", optional: true, default: "none" } },
  async run(event) {
    this.$emit({ order: event.body.order, label: this.label, via: "source" }, { id: "order-" + event.body.order, summary: "order " + event.body.order });
  },
};`;

describe("trigger kinds", () => {
  it("runs on the ticks of an inline timer, with source_type TIMER", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Ticker",
      trigger: { type: "timer", intervalSeconds: 1 },
      steps: [SEE_TRIGGER],
    });
    expect(workflow.trigger.type).toBe("timer");
    expect(workflow.trigger.source_id).toMatch(/^dc_/);
    expect(workflow.trigger).not.toHaveProperty("endpoint_url");
    const source = await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key });
    expect(source.body.data.configured_props.timer).toEqual({ cron: null, interval_seconds: 1 });

    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length >= 2, "two ticks", 20_000);
    for (const run of runs) {
      expect(run.status).toBe("success");
      expect(run.trigger.emitter_id).toBe(workflow.trigger.source_id);
      expect(run.steps[0].$return_value.source_type).toBe("TIMER");
      expect(run.steps[0].$return_value.context_id).toBe(run.trigger.event_id);
      expect(typeof run.steps[0].$return_value.event.timestamp).toBe("number");
    }
    expect(new Set(runs.map((run: any) => run.trigger.event_id)).size).toBe(runs.length);
    // Deleting the workflow stops the schedule with its trigger.
    expect((await call(server.url, "DELETE", `/v1/workflows/${workflow.id}`, { key })).status).toBe(204);
    expect((await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key })).status).toBe(404);
  });

  it("runs on what an existing source emits, and leaves the source in place when the workflow goes", async () => {
    const source = await deploySource(server, key, { component_code: EMITTING_SOURCE, name: "order hook", configured_props: { label: "existing" } });
    const workflow = await createWorkflow(server, key, { name: "On orders", trigger: { source_id: source.id }, steps: [SEE_TRIGGER] });
    expect(workflow.trigger).toMatchObject({ type: "source", source_id: source.id, endpoint_url: source.endpoint_url });

    expect((await post(source.endpoint_url, { order: 7 })).status).toBe(200);
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    const [event] = await eventsOf(server, key, source.id);
    expect(run.status).toBe("success");
    expect(run.trigger).toEqual({ emitter_id: source.id, event_id: event.id, event: { order: 7, label: "existing", via: "source" } });
    expect(run.steps[0].$return_value).toMatchObject({ event: { order: 7, label: "existing", via: "source" }, source_type: "HTTP" });

    expect((await call(server.url, "DELETE", `/v1/workflows/${workflow.id}`, { key })).status).toBe(204);
    // Not the workflow's own: the source stays, and still takes requests.
    expect((await call(server.url, "GET", `/v1/sources/${source.id}`, { key })).status).toBe(200);
    expect((await post(source.endpoint_url, { order: 8 })).status).toBe(200);
  });

  it("refuses a source_id that is not the caller's", async () => {
    const source = await deploySource(server, key, { component_code: EMITTING_SOURCE, name: "private hook" });
    const other = (await createUser(server, "trigger-other")).key;
    const refused = await call(server.url, "POST", "/v1/workflows", { key: other, json: { name: "Steals", trigger: { source_id: source.id }, steps: [SEE_TRIGGER] } });
    expect(refused.status).toBe(404);
  });

  it("deploys an inline source component with its configured props", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Inline component",
      trigger: { component_code: EMITTING_SOURCE, configured_props: { label: "inline" } },
      steps: [SEE_TRIGGER],
    });
    expect(workflow.trigger.type).toBe("component");
    expect(workflow.trigger.endpoint_url).toMatch(/\/e\//);
    expect((await post(workflow.trigger.endpoint_url, { order: 3 })).status).toBe(200);
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    expect(run.trigger.event).toEqual({ order: 3, label: "inline", via: "source" });
    expect(run.steps[0].$return_value.source_type).toBe("HTTP");

    const refused = await call(server.url, "POST", "/v1/workflows", {
      key,
      json: { name: "Bad props", trigger: { component_code: EMITTING_SOURCE, configured_props: { label: 12 } }, steps: [SEE_TRIGGER] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toContain("label");
  });

  it("answers with the workflow's $.respond for a source with customResponse that leaves the answer to it", async () => {
    const source = await deploySource(server, key, {
      component_code: `export default {
        name: "Quiet hook", version: "1.0.0",
        props: { http: { type: "$.interface.http", customResponse: true } },
        async run(event) { this.$emit({ n: event.body.n }); },
      };`,
      name: "quiet hook",
    });
    const workflow = await createWorkflow(server, key, {
      name: "Answers for the source",
      trigger: { source_id: source.id },
      respond: "workflow",
      steps: [{ name: "reply", code: "export default defineComponent({ run({ steps, $ }) { $.respond({ status: 200, body: { twice: steps.trigger.event.n * 2 } }); } })" }],
    });
    const answer = await post(source.endpoint_url, { n: 21 });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ twice: 42 });
    await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
  });
});

describe("changing and removing a workflow", () => {
  it("keeps the id and the endpoint on update, with new steps and a new deployment", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Versioned",
      trigger: { type: "http" },
      steps: [{ name: "v", code: "export default defineComponent({ run() { return 'v1'; } })" }],
    });
    await post(workflow.trigger.endpoint_url, {});
    await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the first run");

    const updated = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, {
      key,
      json: {
        name: "Versioned again",
        steps: [
          { name: "v", code: "export default defineComponent({ run() { return 'v2'; } })" },
          { name: "w", code: "export default defineComponent({ props: { from: { type: 'string' } }, run() { return this.from + '!'; } })", props: { from: "{{steps.v.$return_value}}" } },
        ],
      },
    });
    expect(updated.status).toBe(200);
    const after = updated.body.data;
    expect(after.id).toBe(workflow.id);
    expect(after.name).toBe("Versioned again");
    expect(after.trigger).toEqual(workflow.trigger);
    expect(after.deployment_id).not.toBe(workflow.deployment_id);
    // A step keeps its id across updates (errors name it); a new step gets a new one.
    expect(after.steps[0].id).toBe(workflow.steps[0].id);
    expect(after.steps[0].component_id).not.toBe(workflow.steps[0].component_id);
    expect(after.steps).toHaveLength(2);

    await post(workflow.trigger.endpoint_url, {});
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 2, "the run after the update");
    expect(runs[0].steps.map((step: any) => step.$return_value)).toEqual(["v2", "v2!"]);
    expect(runs[1].steps.map((step: any) => step.$return_value)).toEqual(["v1"]);
    // The same workflow as the update answered; only its run counts moved on.
    const read = (await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key })).body.data;
    expect(read).toEqual({ ...after, last_run_at: new Date(runs[0].started_at_ms).toISOString(), runs_24h: 2, errors_24h: 0 });
  });

  it("keeps the endpoint when respond changes from immediately to workflow, and then waits for $.respond", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Learns to answer",
      trigger: { type: "http" },
      steps: [{ name: "reply", code: "export default defineComponent({ run({ steps, $ }) { $.respond({ status: 203, body: { echo: steps.trigger.event.body.say } }); } })" }],
    });
    const before = await post(workflow.trigger.endpoint_url, { say: "first" });
    expect(before.status).toBe(200);
    expect(await before.json()).toEqual({ success: true, events: 1 });

    const updated = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { respond: "workflow" } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.respond).toBe("workflow");
    expect(updated.body.data.trigger).toEqual(workflow.trigger);

    const after = await post(workflow.trigger.endpoint_url, { say: "second" });
    expect(after.status).toBe(203);
    expect(await after.json()).toEqual({ echo: "second" });

    // And back: answered at once again, same endpoint.
    const back = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { respond: "immediately" } });
    expect(back.body.data.trigger).toEqual(workflow.trigger);
    const third = await post(workflow.trigger.endpoint_url, { say: "third" });
    expect(third.status).toBe(200);
    expect(await third.json()).toEqual({ success: true, events: 1 });
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 3, "three runs");
    expect(runs.map((run: any) => run.trigger.event.body.say)).toEqual(["third", "second", "first"]);
  });

  it("keeps the endpoint when the same HTTP trigger is given again, and changes an inline trigger's kind in place", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Changes its trigger",
      trigger: { type: "http" },
      steps: [SEE_TRIGGER],
    });
    const same = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { trigger: { type: "http" } } });
    expect(same.status).toBe(200);
    expect(same.body.data.trigger).toEqual(workflow.trigger);

    // HTTP → timer: the same source, now a schedule (no endpoint).
    const timed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { trigger: { type: "timer", intervalSeconds: 3600 } } });
    expect(timed.status).toBe(200);
    expect(timed.body.data.trigger).toEqual({ type: "timer", source_id: workflow.trigger.source_id });
    expect((await post(workflow.trigger.endpoint_url, {})).status).toBe(404);
    const source = await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key });
    expect(source.body.data.configured_props).toEqual({ timer: { cron: null, interval_seconds: 3600 } });

    // A timer cannot answer HTTP callers, on update as on create.
    const responds = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { respond: "workflow" } });
    expect(responds.status).toBe(400);
    expect(responds.body.error.details.field).toBe("respond");

    // Timer → HTTP: the timer's props go with it; the source takes requests again.
    const back = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { trigger: { type: "http" } } });
    expect(back.status).toBe(200);
    expect(back.body.data.trigger).toMatchObject({ type: "http", source_id: workflow.trigger.source_id, endpoint_url: expect.stringMatching(/\/e\//) });
    expect((await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key })).body.data.configured_props).toEqual({
      http: { endpoint_url: back.body.data.trigger.endpoint_url },
    });
    expect((await post(back.body.data.trigger.endpoint_url, { again: true })).status).toBe(200);
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");
    expect(run.steps[0].$return_value).toMatchObject({ source_type: "HTTP", event: { body: { again: true } } });
  });

  it("pauses its own trigger while inactive (the endpoint answers 404), and runs again once active", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Pausable",
      trigger: { type: "http" },
      steps: [{ name: "see", code: "export default defineComponent({ run({ steps }) { return steps.trigger.event.body.n; } })" }],
    });
    const paused = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { active: false } });
    expect(paused.body.data).toMatchObject({ active: false, trigger: workflow.trigger });
    expect((await post(workflow.trigger.endpoint_url, { n: 1 })).status).toBe(404);
    expect((await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key })).body.data.active).toBe(false);

    const resumed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { active: true } });
    expect(resumed.body.data).toMatchObject({ active: true, trigger: workflow.trigger });
    expect((await post(workflow.trigger.endpoint_url, { n: 2 })).status).toBe(200);
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run once active");
    expect(runs[0].steps[0].$return_value).toBe(2);

    // Created paused: its trigger is paused from the start.
    const born = await createWorkflow(server, key, { name: "Born paused", trigger: { type: "http" }, active: false, steps: [SEE_TRIGGER] });
    expect(born.active).toBe(false);
    expect((await post(born.trigger.endpoint_url, {})).status).toBe(404);
  });

  it("does not run what a shared source emits while inactive, not even later", async () => {
    const source = await deploySource(server, key, { component_code: EMITTING_SOURCE, name: "shared hook" });
    const paused = await createWorkflow(server, key, { name: "Paused listener", trigger: { source_id: source.id }, steps: [SEE_TRIGGER] });
    const active = await createWorkflow(server, key, { name: "Active listener", trigger: { source_id: source.id }, steps: [SEE_TRIGGER] });
    expect((await call(server.url, "PUT", `/v1/workflows/${paused.id}`, { key, json: { active: false } })).body.data.active).toBe(false);
    // Not the workflow's own: the source stays on for the other listener.
    expect((await call(server.url, "GET", `/v1/sources/${source.id}`, { key })).body.data.active).toBe(true);

    expect((await post(source.endpoint_url, { order: 1 })).status).toBe(200);
    // Both deliveries of the event are taken together: once the active listener's run is recorded, the paused one's was dropped.
    await waitFor(() => runsOf(server, key, active.id), (runs) => runs.length === 1, "the active listener's run");
    expect(await server.server.store.pendingDeliveries(paused.id, 10)).toEqual([]);
    expect(await runsOf(server, key, paused.id)).toEqual([]);

    expect((await call(server.url, "PUT", `/v1/workflows/${paused.id}`, { key, json: { active: true } })).body.data.active).toBe(true);
    expect((await post(source.endpoint_url, { order: 2 })).status).toBe(200);
    const runs = await waitFor(() => runsOf(server, key, paused.id), (runs) => runs.length === 1, "the run once active");
    expect(runs[0].trigger.event.order).toBe(2);
    await waitFor(() => runsOf(server, key, active.id), (runs) => runs.length === 2, "the active listener's second run");
  });

  it("deletes the workflow with its inline trigger, endpoint and runs", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Short lived",
      trigger: { type: "http" },
      steps: [{ name: "see", code: "export default defineComponent({ run() { return 1; } })" }],
    });
    await post(workflow.trigger.endpoint_url, {});
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run");

    expect((await call(server.url, "DELETE", `/v1/workflows/${workflow.id}`, { key })).status).toBe(204);
    expect((await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key })).status).toBe(404);
    expect((await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs`, { key })).status).toBe(404);
    expect((await call(server.url, "GET", `/v1/runs/${run.id}`, { key })).status).toBe(404);
    expect((await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key })).status).toBe(404);
    const endpoint = await post(workflow.trigger.endpoint_url, {});
    expect(endpoint.status).toBe(404);
    const listed = await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key });
    expect(listed.body.data.map((item: any) => item.id)).not.toContain(workflow.id);
    const subscriptions = await call(server.url, "GET", "/v1/users/me/subscriptions", { key });
    expect(subscriptions.body.data.filter((sub: any) => sub.listener_id === workflow.id || sub.emitter_id === workflow.id)).toEqual([]);
    expect((await call(server.url, "DELETE", `/v1/workflows/${workflow.id}`, { key })).status).toBe(404);
  });
});
