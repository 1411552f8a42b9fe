import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { errorWorkflowOf, fire, keysOf, OK_STEP, runCount, settle, throwingStep } from "./error-helpers.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

// As the seed sends it: query parameters, Content-Type: application/json, and no body.
const subscribe = (key: string, query: string) => call(server.url, "POST", `/v1/subscriptions?${query}`, { key, rawBody: "" });
const unsubscribe = (key: string, query: string) => call(server.url, "DELETE", `/v1/subscriptions?${query}`, { key });
const subscriptionsOf = async (key: string) => {
  const listed = await call(server.url, "GET", "/v1/users/me/subscriptions", { key });
  expect(listed.status).toBe(200);
  return listed.body.data as any[];
};

/** A failing workflow and a listener that returns what it got (an HTTP trigger of its own, as the seed suggests). */
async function pair(key: string, prefix: string) {
  const emitter = await createWorkflow(server, key, { name: `${prefix} emitter`, trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep(`${prefix} failed`) }] });
  const listener = await createWorkflow(server, key, {
    name: `${prefix} listener`,
    trigger: { type: "http" },
    steps: [{ name: "look", code: "export default defineComponent({ async run({ steps }) { return { keys: Object.keys(steps.trigger.event).sort(), code: steps.trigger.event.error?.code ?? null }; } })" }],
  });
  return { emitter, listener };
}

describe.concurrent("$errors subscriptions (each test its own user)", () => {
  it("each error of the emitter triggers the listener with the error event; DELETE stops it", async () => {
    const { key } = await createUser(server, "sam");
    const { emitter, listener } = await pair(key, "Forward");
    const query = `emitter_id=${emitter.id}&listener_id=${listener.id}&event_name=$errors`;

    const created = await subscribe(key, query);
    expect(created.status).toBe(200);
    expect(created.body.data).toEqual({ id: expect.stringMatching(/^sub_/), emitter_id: emitter.id, listener_id: listener.id, event_name: "$errors", created_at: expect.any(Number) });
    // The same subscription again (this time without a Content-Type) is the same one, not a second delivery path.
    const again = await call(server.url, "POST", `/v1/subscriptions?${query}`, { key });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(created.body.data.id);
    // And its parameters as a JSON body (as some clients send them): the same one again.
    const fromBody = await call(server.url, "POST", "/v1/subscriptions", { key, json: { emitter_id: emitter.id, listener_id: listener.id, event_name: "$errors" } });
    expect(fromBody.status).toBe(200);
    expect(fromBody.body.data.id).toBe(created.body.data.id);
    const missing = await call(server.url, "POST", "/v1/subscriptions", { key, json: { emitter_id: emitter.id } });
    expect(missing.body.error).toMatchObject({ code: "ValidationError", details: { field: "listener_id" } });
    const listed = await subscriptionsOf(key);
    expect(listed.filter((subscription) => subscription.emitter_id === emitter.id)).toEqual([created.body.data]);
    // The listener's own trigger is listed too (its HTTP source's default channel).
    expect(listed).toContainEqual(expect.objectContaining({ emitter_id: listener.trigger.source_id, listener_id: listener.id, event_name: "" }));

    await fire(emitter.trigger.endpoint_url, { n: 1 });
    await fire(emitter.trigger.endpoint_url, { n: 2 });
    const runs = await waitFor(() => runsOf(server, key, listener.id), (runs) => runs.length === 2, "two listener runs");
    const errors = (await errorsOf(server, key, emitter.id)).data;
    expect(errors).toHaveLength(2);
    for (const run of runs) {
      const error = errors.find((item: any) => item.id === run.trigger.event_id);
      expect(error, "the run's trigger is the error event").toBeDefined();
      expect(run.status).toBe("success");
      expect(run.trigger.emitter_id).toBe(emitter.id);
      expect(keysOf(run.trigger.event)).toEqual(["error", "original_context", "original_event"]);
      expect(run.trigger.event).toEqual(error.event);
      expect(run.steps[0].$return_value).toEqual({ keys: ["error", "original_context", "original_event"], code: "UserError" });
    }
    expect(runs.map((run) => run.trigger.event.original_event.body.n).sort()).toEqual([1, 2]);

    const removed = await unsubscribe(key, query);
    expect(removed.status).toBe(204);
    expect((await subscriptionsOf(key)).filter((subscription) => subscription.emitter_id === emitter.id)).toEqual([]);
    expect((await unsubscribe(key, query)).status).toBe(404);

    // Errors go on (the error workflow still gets them), the listener hears no more.
    const errorWorkflow = await errorWorkflowOf(server, key);
    await fire(emitter.trigger.endpoint_url, { n: 3 });
    await waitFor(() => runCount(server, key, errorWorkflow.id), (count) => count === 3, "the third error handled");
    await settle();
    expect((await errorsOf(server, key, emitter.id)).page_info.total_count).toBe(3);
    expect(await runCount(server, key, listener.id)).toBe(2);
  });

  it("p_* forwards the errors of every workflow, auto_subscriptions those of workflows made later", async () => {
    const { key } = await createUser(server, "gus");
    const { emitter, listener } = await pair(key, "Glob");
    const glob = await subscribe(key, `emitter_id=p_*&listener_id=${listener.id}&event_name=$errors`);
    expect(glob.status).toBe(200);
    expect(glob.body.data).toMatchObject({ emitter_id: "p_*", listener_id: listener.id, event_name: "$errors" });

    const auto = await createWorkflow(server, key, {
      name: "Auto listener",
      trigger: { type: "http" },
      steps: [{ name: "look", code: "export default defineComponent({ async run({ steps }) { return steps.trigger.event.original_context.workflow_id; } })" }],
    });
    const made = await call(server.url, "POST", `/v1/auto_subscriptions?event_name=$errors&listener_id=${auto.id}`, { key });
    expect(made.status).toBe(200);
    expect(made.body.data.map((subscription: any) => [subscription.emitter_id, subscription.listener_id, subscription.event_name])).toEqual([
      ["p_*", auto.id, "$errors"],
      ["dc_*", auto.id, "$errors"],
    ]);

    // A workflow made after both: its errors reach both listeners, as do the first one's.
    const later = await createWorkflow(server, key, { name: "Made later", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("later failed") }] });
    await fire(emitter.trigger.endpoint_url);
    await fire(later.trigger.endpoint_url);
    const globRuns = await waitFor(() => runsOf(server, key, listener.id), (runs) => runs.length === 2, "the glob listener's runs");
    expect(globRuns.map((run) => run.trigger.emitter_id).sort()).toEqual([emitter.id, later.id].sort());
    const autoRuns = await waitFor(() => runsOf(server, key, auto.id), (runs) => runs.length === 2, "the auto listener's runs");
    expect(autoRuns.map((run) => run.steps[0].$return_value).sort()).toEqual([emitter.id, later.id].sort());

    // Subscribed through the glob and by name too: still one run per error.
    expect((await subscribe(key, `emitter_id=${emitter.id}&listener_id=${listener.id}&event_name=$errors`)).status).toBe(200);
    await fire(emitter.trigger.endpoint_url);
    const errorWorkflow = await errorWorkflowOf(server, key);
    await waitFor(() => runCount(server, key, errorWorkflow.id), (count) => count === 3, "the third error handled");
    await waitFor(() => runCount(server, key, listener.id), (count) => count >= 3, "the glob listener's third run");
    await settle();
    expect(await runCount(server, key, listener.id)).toBe(3);
  });

  it("refuses what it cannot do: bad ids 400 naming the field, another user's workflows 404", async () => {
    const owner = await createUser(server, "ona");
    const other = await createUser(server, "oleg");
    const { emitter, listener } = await pair(owner.key, "Refusals");
    const theirs = await createWorkflow(server, other.key, { name: "Theirs", trigger: { type: "http" }, steps: [{ name: "ok", code: OK_STEP }] });

    const cases: Array<[string, number, string]> = [
      [`emitter_id=x_123&listener_id=${listener.id}&event_name=$errors`, 400, "emitter_id"],
      [`emitter_id=${emitter.id}&listener_id=x_123&event_name=$errors`, 400, "listener_id"],
      // Sources and webhooks listen too; one that does not exist is a 404 naming it.
      [`emitter_id=${emitter.id}&listener_id=dc_123&event_name=$errors`, 404, "dc_123"],
      [`emitter_id=${emitter.id}&listener_id=wh_123&event_name=$errors`, 404, "wh_123"],
      [`emitter_id=${listener.id}&listener_id=${listener.id}&event_name=$errors`, 400, "listener_id"],
      [`emitter_id=${theirs.id}&listener_id=${listener.id}&event_name=$errors`, 404, theirs.id],
      [`emitter_id=${emitter.id}&listener_id=${theirs.id}&event_name=$errors`, 404, theirs.id],
      [`emitter_id=p_doesnotexist&listener_id=${listener.id}&event_name=$errors`, 404, "p_doesnotexist"],
    ];
    for (const [query, status, named] of cases) {
      const refused = await subscribe(owner.key, query);
      expect(refused.status, query).toBe(status);
      if (status === 400) expect(refused.body.error, query).toMatchObject({ code: "ValidationError", details: { field: named } });
      else expect(refused.body.error.message, query).toContain(named);
    }
    // The 404 for another user's workflow is the 404 of a missing one: nothing tells it exists.
    const missing = await subscribe(owner.key, `emitter_id=p_doesnotexist&listener_id=${listener.id}&event_name=$errors`);
    const foreign = await subscribe(owner.key, `emitter_id=${theirs.id}&listener_id=${listener.id}&event_name=$errors`);
    expect(foreign.body.error.code).toBe(missing.body.error.code);
    expect(foreign.body.error.message.replace(theirs.id, "<id>")).toBe(missing.body.error.message.replace("p_doesnotexist", "<id>"));

    const withoutListener = await call(server.url, "POST", `/v1/subscriptions?emitter_id=${emitter.id}`, { key: owner.key });
    expect(withoutListener.status).toBe(400);
    expect(JSON.stringify(withoutListener.body.error)).toContain("listener_id");
    expect((await call(server.url, "POST", `/v1/auto_subscriptions?event_name=$errors&listener_id=${theirs.id}`, { key: owner.key })).status).toBe(404);

    // None of it was stored.
    expect((await subscriptionsOf(owner.key)).filter((subscription) => subscription.event_name === "$errors" && subscription.emitter_id !== "p_*")).toEqual([]);
    expect((await subscriptionsOf(other.key)).some((subscription) => subscription.listener_id !== theirs.id && subscription.emitter_id !== "p_*")).toBe(false);
    // Another user cannot remove the owner's subscription either.
    const query = `emitter_id=${emitter.id}&listener_id=${listener.id}&event_name=$errors`;
    expect((await subscribe(owner.key, query)).status).toBe(200);
    expect((await unsubscribe(other.key, query)).status).toBe(404);
    expect((await subscriptionsOf(owner.key)).filter((subscription) => subscription.emitter_id === emitter.id)).toHaveLength(1);
  });

  it("a deleted workflow takes its subscriptions with it", async () => {
    const { key } = await createUser(server, "dora");
    const { emitter, listener } = await pair(key, "Deleted");
    expect((await subscribe(key, `emitter_id=${emitter.id}&listener_id=${listener.id}&event_name=$errors`)).status).toBe(200);
    expect((await call(server.url, "DELETE", `/v1/workflows/${listener.id}`, { key })).status).toBe(204);
    const left = await subscriptionsOf(key);
    expect(left.filter((subscription) => subscription.listener_id === listener.id || subscription.emitter_id === emitter.id)).toEqual([]);
    // The emitter fails on; only the error workflow hears it.
    const errorWorkflow = await errorWorkflowOf(server, key);
    await fire(emitter.trigger.endpoint_url);
    await waitFor(() => runCount(server, key, errorWorkflow.id), (count) => count === 1, "the error handled");
    expect((await errorsOf(server, key, emitter.id)).page_info.total_count).toBe(1);
  });
});
