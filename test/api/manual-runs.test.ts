import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { errorsOf, createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";

/** POST /v1/workflows/<id>/runs: run now and test runs with a sample event, and the run's timeline the console shows. */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const ECHO_STEP = "export default defineComponent({ async run({ steps }) { return { seen: steps.trigger.event }; } })";

const runNow = (key: string, workflowId: string, options: { json?: unknown; query?: string } = {}) =>
  call(server.url, "POST", `/v1/workflows/${workflowId}/runs${options.query ?? ""}`, { key, ...(options.json === undefined ? {} : { json: options.json }) });

describe.concurrent("running a workflow by hand (each test its own user)", () => {
  it("creates a workflow with a manual trigger, queues a run on a sample event and records it under the id it answered", async () => {
    const { key } = await createUser(server, "mona");
    const workflow = await createWorkflow(server, key, { name: "By hand", trigger: { type: "manual" }, steps: [{ name: "echo", code: ECHO_STEP }] });
    expect(workflow.trigger).toEqual({ type: "none", source_id: null });
    expect(workflow.triggers).toEqual([]);

    const queued = await runNow(key, workflow.id, { json: { event: { order: 42, items: ["a"] } } });
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ data: { run_id: expect.stringMatching(/^run_/) } });
    const runId = queued.body.data.run_id;
    const recorded = await waitFor(() => call(server.url, "GET", `/v1/runs/${runId}`, { key }), (answer) => answer.status === 200, "the run");
    expect(recorded.body.data).toMatchObject({
      id: runId,
      workflow_id: workflow.id,
      status: "success",
      trigger: { emitter_id: workflow.id, event: { order: 42, items: ["a"] } },
      steps: [{ name: "echo", status: "success", $return_value: { seen: { order: 42, items: ["a"] } } }],
    });
    // Listed like any other run.
    expect((await runsOf(server, key, workflow.id)).map((run) => run.id)).toEqual([runId]);
  });

  it("turns an HTTP trigger into a manual one on update: the endpoint goes, runs by hand stay", async () => {
    const { key } = await createUser(server, "ravi");
    const workflow = await createWorkflow(server, key, { name: "Was HTTP", trigger: { type: "http" }, steps: [{ name: "echo", code: ECHO_STEP }] });
    const endpoint = workflow.trigger.endpoint_url;
    const updated = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { trigger: { type: "manual" } } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.trigger).toEqual({ type: "none", source_id: null });
    expect((await fetch(endpoint, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await call(server.url, "GET", `/v1/sources/${workflow.trigger.source_id}`, { key })).status).toBe(404);
    const ran = await runNow(key, workflow.id, { json: { event: { n: 1 } }, query: "?wait=true" });
    expect(ran.body.data).toMatchObject({ status: "success", trigger: { event: { n: 1 } } });
  });

  it("with wait=true answers the finished run in the GET /v1/runs/<id> shape; without a body the event is {}", async () => {
    const { key } = await createUser(server, "nils");
    const workflow = await createWorkflow(server, key, { name: "Waited", trigger: { type: "http" }, steps: [{ name: "echo", code: ECHO_STEP }] });
    const answer = await runNow(key, workflow.id, { query: "?wait=true" });
    expect(answer.status).toBe(200);
    expect(answer.body.data.status).toBe("success");
    expect(answer.body.data.trigger.event).toEqual({});
    expect(answer.body.data.steps[0].$return_value).toEqual({ seen: {} });
    const read = await call(server.url, "GET", `/v1/runs/${answer.body.data.id}`, { key });
    expect(read.body.data).toEqual(answer.body.data);
    // Two runs at once are two runs.
    const [a, b] = await Promise.all([1, 2].map((n) => runNow(key, workflow.id, { json: { event: { n } }, query: "?wait=true" })));
    expect(a!.body.data.id).not.toBe(b!.body.data.id);
    expect([a!.body.data.trigger.event.n, b!.body.data.trigger.event.n].sort()).toEqual([1, 2]);
  });

  it("gives the console a run's timeline: each step's times, return value, exports, $summary, logs, the error with its stack, and $.flow.exit's reason", async () => {
    const { key } = await createUser(server, "olga");
    const workflow = await createWorkflow(server, key, {
      name: "Timeline",
      steps: [
        {
          name: "first",
          code: `export default defineComponent({ async run({ steps, $ }) {
            console.log("got", steps.trigger.event.n);
            $.export("doubled", steps.trigger.event.n * 2);
            $.export("$summary", "doubled it");
            return { n: steps.trigger.event.n };
          } })`,
        },
        {
          name: "second",
          code: `export default defineComponent({ async run({ steps, $ }) {
            if (steps.trigger.event.fail) throw new Error("second broke on " + steps.first.doubled);
            return $.flow.exit("nothing more to do");
          } })`,
        },
        { name: "third", code: ECHO_STEP },
      ],
    });

    const exited = (await runNow(key, workflow.id, { json: { event: { n: 3 } }, query: "?wait=true" })).body.data;
    expect(exited.status).toBe("exited");
    expect(exited.exit_reason).toBe("nothing more to do");
    const [first, second, third] = exited.steps;
    expect(first).toMatchObject({ name: "first", status: "success", $return_value: { n: 3 }, exports: { doubled: 6 }, summary: "doubled it" });
    expect(first.logs.map((log: any) => [log.stream, log.text])).toEqual([["stdout", "got 3"]]);
    expect(second).toMatchObject({ name: "second", status: "exited" });
    expect(third.status).toBe("skipped");
    // Times: a step starts within the run and no earlier than the step before it ended.
    expect(first.started_at_ms).toBeGreaterThanOrEqual(exited.started_at_ms);
    expect(second.started_at_ms).toBeGreaterThanOrEqual(first.started_at_ms + Math.floor(first.duration_ms));
    expect(second.started_at_ms + second.duration_ms).toBeLessThanOrEqual(exited.finished_at_ms + 1);

    const failed = (await runNow(key, workflow.id, { json: { event: { n: 4, fail: true } }, query: "?wait=true" })).body.data;
    expect(failed.status).toBe("error");
    expect(failed.error).toMatchObject({ code: "UserError", msg: "second broke on 8", cellId: workflow.steps[1].id });
    expect(failed.error.stack).toContain("second broke on 8");
    expect(failed.steps[1]).toMatchObject({ name: "second", status: "error" });
    // The failure is listed in $errors like any other, marked as a manual run.
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the error");
    expect(errors.data[0].event.original_event).toEqual({ n: 4, fail: true });
    expect(errors.data[0].event.original_context.source_type).toBe("MANUAL");
  });

  it("answers 404 for another user's workflow, 409 for a paused one, 400 naming an unknown field", async () => {
    const { key } = await createUser(server, "pia");
    const other = await createUser(server, "quin");
    const workflow = await createWorkflow(server, key, { name: "Mine", steps: [{ name: "echo", code: ECHO_STEP }] });

    const foreign = await runNow(other.key, workflow.id, { json: { event: {} } });
    expect(foreign.status).toBe(404);
    expect(await runsOf(server, key, workflow.id)).toEqual([]);

    const typo = await runNow(key, workflow.id, { json: { evnt: {} } });
    expect(typo.status).toBe(400);
    expect(typo.body.error.details).toMatchObject({ field: "evnt" });

    expect((await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { active: false } })).status).toBe(200);
    const paused = await runNow(key, workflow.id, { json: { event: {} } });
    expect(paused.status).toBe(409);
    expect(paused.body.error.message).toContain("paused");

    expect((await runNow("", workflow.id)).status).toBe(401);
  });
});
