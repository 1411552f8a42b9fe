import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { errorWorkflowOf, fire, runCount, settle, throwingStep } from "./error-helpers.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

let server: TestServer;
let alice: { id: string; key: string };
let bob: { id: string; key: string };
/** Alice's: a failing workflow with a run and an error, a listener of its $errors, and her error workflow. */
let workflow: any;
let listener: any;
let run: any;
let error: any;
beforeAll(async () => {
  server = await startTestServer();
  [alice, bob] = await Promise.all([createUser(server, "alice"), createUser(server, "bob")]);
  workflow = await createWorkflow(server, alice.key, { name: "Private", trigger: { type: "http" }, steps: [{ name: "explode", code: throwingStep("secret failure") }] });
  listener = await createWorkflow(server, alice.key, { name: "Private listener", trigger: { type: "http" }, steps: [{ name: "ok", code: "export default defineComponent({ async run() { return 1; } })" }] });
  const subscribed = await call(server.url, "POST", `/v1/subscriptions?emitter_id=${workflow.id}&listener_id=${listener.id}&event_name=$errors`, { key: alice.key });
  if (subscribed.status !== 200) throw new Error(`subscribing failed: ${JSON.stringify(subscribed.body)}`);
  await fire(workflow.trigger.endpoint_url, { n: 1 });
  error = (await waitFor(() => errorsOf(server, alice.key, workflow.id), (body) => body.data.length === 1, "alice's error")).data[0];
  [run] = await runsOf(server, alice.key, workflow.id);
});
afterAll(() => server.close());

describe("isolation between users", () => {
  it("another user's workflow, runs, errors, replay and subscriptions answer 404, like missing ones", async () => {
    const requests: Array<[string, string, unknown?]> = [
      ["GET", `/v1/workflows/${workflow.id}`],
      ["GET", `/v1/workflows/${workflow.name_slug}`],
      ["PUT", `/v1/workflows/${workflow.id}`, { name: "Taken over" }],
      ["DELETE", `/v1/workflows/${workflow.id}`],
      ["GET", `/v1/workflows/${workflow.id}/runs`],
      ["GET", `/v1/runs/${run.id}`],
      ["GET", `/v1/workflows/${workflow.id}/$errors/event_summaries?expand=event`],
      ["POST", `/v1/workflows/${workflow.id}/$errors/${error.id}/replay`],
      ["POST", `/v1/workflows/${workflow.id}/$errors/replay`, {}],
      ["GET", `/v1/workflows/${workflow.id}/event_summaries`],
      ["GET", `/v1/workflows/${workflow.id}/logs`],
      ["POST", `/v1/subscriptions?emitter_id=${workflow.id}&listener_id=${listener.id}&event_name=$errors`],
      ["DELETE", `/v1/subscriptions?emitter_id=${workflow.id}&listener_id=${listener.id}&event_name=$errors`],
    ];
    for (const [method, path, json] of requests) {
      const answer = await call(server.url, method, path, { key: bob.key, ...(json === undefined ? {} : { json }) });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.error.code, `${method} ${path}`).toBe("NotFound");
      // The owner gets the same requests answered (GETs; the changes are not made).
      if (method === "GET") expect((await call(server.url, method, path, { key: alice.key })).status, `${method} ${path} by the owner`).toBe(200);
    }
    // The answer for another user's workflow is the answer for one that does not exist.
    const foreign = await call(server.url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries`, { key: bob.key });
    const missing = await call(server.url, "GET", "/v1/workflows/p_doesnotexist/$errors/event_summaries", { key: bob.key });
    expect(foreign.body.error.message.replace(workflow.id, "<id>")).toBe(missing.body.error.message.replace("p_doesnotexist", "<id>"));
    const foreignRun = await call(server.url, "GET", `/v1/runs/${run.id}`, { key: bob.key });
    const missingRun = await call(server.url, "GET", "/v1/runs/run_doesnotexist", { key: bob.key });
    expect(foreignRun.body.error.message.replace(run.id, "<id>")).toBe(missingRun.body.error.message.replace("run_doesnotexist", "<id>"));
    // A live stream of it is refused too.
    const stream = await fetch(`${server.url}/v1/workflows/${workflow.id}/sse`, { headers: { authorization: `Bearer ${bob.key}` } });
    expect(stream.status).toBe(404);
    await stream.body?.cancel();

    // Nothing changed for the owner.
    const mine = await call(server.url, "GET", `/v1/workflows/${workflow.id}`, { key: alice.key });
    expect(mine.body.data.name).toBe("Private");
    expect((await errorsOf(server, alice.key, workflow.id)).page_info.total_count).toBe(1);
    expect(await runCount(server, alice.key, workflow.id)).toBe(1);
    const aliceSubscriptions = (await call(server.url, "GET", "/v1/users/me/subscriptions", { key: alice.key })).body.data;
    expect(aliceSubscriptions).toContainEqual(expect.objectContaining({ emitter_id: workflow.id, listener_id: listener.id, event_name: "$errors" }));
  });

  it("a user's listings show none of another's workflows, subscriptions or mails, and their globs hear none of their errors", async () => {
    const aliceIds = new Set<string>([workflow.id, listener.id, (await errorWorkflowOf(server, alice.key)).id]);
    // Bob's own workflow may take the same name (and slug) as Alice's.
    const mine = await createWorkflow(server, bob.key, {
      name: "Private",
      trigger: { type: "http" },
      steps: [{ name: "hear", code: "export default defineComponent({ async run({ steps }) { return steps.trigger.event.original_context?.workflow_id ?? null; } })" }],
    });
    expect(mine.name_slug).toBe(workflow.name_slug);
    expect((await call(server.url, "GET", `/v1/workflows/${workflow.name_slug}`, { key: bob.key })).body.data.id).toBe(mine.id);
    expect((await call(server.url, "GET", `/v1/workflows/${workflow.name_slug}`, { key: alice.key })).body.data.id).toBe(workflow.id);
    const globbed = await call(server.url, "POST", `/v1/subscriptions?emitter_id=p_*&listener_id=${mine.id}&event_name=$errors`, { key: bob.key });
    expect(globbed.status).toBe(200);

    const workflows = (await call(server.url, "GET", "/v1/users/me/workflows?limit=100", { key: bob.key })).body;
    expect(workflows.data.some((candidate: any) => aliceIds.has(candidate.id))).toBe(false);
    expect(workflows.page_info.total_count).toBe(2); // his workflow and his own error workflow
    const bobErrorWorkflow = await errorWorkflowOf(server, bob.key);
    expect(bobErrorWorkflow.id).not.toBe([...aliceIds][2]);
    const subscriptions = (await call(server.url, "GET", "/v1/users/me/subscriptions", { key: bob.key })).body.data;
    expect(subscriptions.every((subscription: any) => !aliceIds.has(subscription.emitter_id) && !aliceIds.has(subscription.listener_id))).toBe(true);

    // Alice's next error reaches her listener and error workflow; Bob's p_* listener and error workflow hear nothing.
    const aliceErrorWorkflow = await errorWorkflowOf(server, alice.key);
    await fire(workflow.trigger.endpoint_url, { n: 2 });
    await waitFor(() => runCount(server, alice.key, listener.id), (count) => count === 2, "alice's listener run");
    await waitFor(() => runCount(server, alice.key, aliceErrorWorkflow.id), (count) => count === 2, "alice's error workflow run");
    await settle();
    expect(await runCount(server, bob.key, mine.id)).toBe(0);
    expect(await runCount(server, bob.key, bobErrorWorkflow.id)).toBe(0);
    expect((await call(server.url, "GET", "/v1/outbox", { key: bob.key })).body.page_info.total_count).toBe(0);
    expect((await call(server.url, "GET", "/v1/outbox", { key: alice.key })).body.page_info.total_count).toBe(1);
  });

  it("two users saving the same code at once both succeed (bundle files are shared by content)", async () => {
    const code = throwingStep(`shared code ${Date.now()}`);
    const created = await Promise.all(
      [alice, bob, alice, bob, alice, bob].map((user, index) =>
        call(server.url, "POST", "/v1/workflows", { key: user.key, json: { name: `Same code ${index}`, trigger: { type: "http" }, steps: [{ name: "explode", code }] } }),
      ),
    );
    expect(created.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // And each runs its own copy.
    await fire(created[1]!.body.data.trigger.endpoint_url);
    const errors = await waitFor(() => errorsOf(server, bob.key, created[1]!.body.data.id), (body) => body.data.length === 1, "bob's error");
    expect(errors.data[0].event.original_context.owner_id).toBe(bob.id);
  });
});
