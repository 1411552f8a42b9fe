import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { fire, runCount, throwingStep } from "./error-helpers.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const FIXED_STEP = "export default defineComponent({ async run({ steps }) { return { fixed: steps.trigger.event.body.n }; } })";

/** Throws a plain string for `{"kind": "string"}`, an Error otherwise: two error codes from one step. */
const TWO_CODES_STEP = `export default defineComponent({ async run({ steps }) {
  if (steps.trigger.event.body.kind === "string") throw "not an error";
  throw new Error("broken " + steps.trigger.event.body.n);
} })`;

const replayOne = (key: string, workflowId: string, eventId: string) => call(server.url, "POST", `/v1/workflows/${workflowId}/$errors/${eventId}/replay`, { key });
const replayMany = (key: string, workflowId: string, json?: unknown) =>
  call(server.url, "POST", `/v1/workflows/${workflowId}/$errors/replay`, { key, ...(json === undefined ? {} : { json }) });

/** A broken HTTP workflow with `count` errors listed (n = 1…count, in no set order); returns them oldest first. */
async function brokenWithErrors(key: string, name: string, count: number, code = throwingStep("not yet")) {
  const workflow = await createWorkflow(server, key, { name, trigger: { type: "http" }, steps: [{ name: "work", code }] });
  for (let n = 1; n <= count; n++) await fire(workflow.trigger.endpoint_url, { n });
  const listed = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === count, `${count} errors`);
  return { workflow, errors: [...listed.data].reverse() as any[] };
}

describe.concurrent("replaying errors (each test its own user)", () => {
  it("replays one error on its original event; after the step is fixed the replay succeeds", async () => {
    const { key } = await createUser(server, "rita");
    const { workflow, errors } = await brokenWithErrors(key, "Replayed", 2);
    const target = errors[0];
    // Runs of one workflow may finish in any order: the error says which request it was.
    const n = target.event.original_event.body.n;

    const accepted = await replayOne(key, workflow.id, target.id);
    expect(accepted.status).toBe(202);
    expect(accepted.body.data).toEqual({ error_id: target.id, event_id: expect.any(String) });
    // Like every other event id: <epoch ms>-<sequence>.
    expect(accepted.body.data.event_id).toMatch(/^\d{13}-\d{1,3}$/);
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 3, "the replay run");
    const replay = runs.find((run) => run.replay_of === target.id);
    expect(replay).toBeDefined();
    expect(replay.trigger.event).toEqual(target.event.original_event);
    expect(replay.trigger.event_id).toBe(accepted.body.data.event_id);
    // Still broken: the replay fails the same way, and its error is listed like any other.
    expect(replay.status).toBe("error");
    expect(replay.error).toMatchObject({ code: "UserError", msg: `not yet ${n}`, cellId: workflow.steps[0].id });
    const afterFirst = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 3, "the replay's error");
    expect(afterFirst.data[0].event.original_event).toEqual(target.event.original_event);
    expect(afterFirst.data[0].metadata.emit_id).toBe(replay.id);

    const fixed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "work", code: FIXED_STEP }] } });
    expect(fixed.status).toBe(200);
    // Same step name, same cellId: the errors still name it.
    expect(fixed.body.data.steps[0].id).toBe(workflow.steps[0].id);

    const again = await replayOne(key, workflow.id, target.id);
    expect(again.status).toBe(202);
    // Each replay is a run of its own, even of the same error.
    expect(again.body.data.event_id).not.toBe(accepted.body.data.event_id);
    const succeeded = await waitFor(
      () => runsOf(server, key, workflow.id),
      (runs) => runs.some((run) => run.trigger.event_id === again.body.data.event_id),
      "the successful replay",
    );
    const good = succeeded.find((run) => run.trigger.event_id === again.body.data.event_id);
    expect(good).toMatchObject({ status: "success", replay_of: target.id, error: null, steps: [{ id: workflow.steps[0].id, status: "success", $return_value: { fixed: n } }] });
    expect(good.trigger.event).toEqual(target.event.original_event);
    // Ordinary runs are not replays.
    expect(succeeded.filter((run) => run.replay_of === null)).toHaveLength(2);
    expect((await errorsOf(server, key, workflow.id)).page_info.total_count).toBe(3);
  });

  it("replays every listed error without a body, or a subset by code or event_ids", async () => {
    const { key } = await createUser(server, "bulky");
    const { workflow, errors } = await brokenWithErrors(key, "Bulk", 3, TWO_CODES_STEP);
    await fire(workflow.trigger.endpoint_url, { kind: "string", n: 4 });
    const listed = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 4, "four errors");
    const stringError = listed.data.find((item: any) => item.event.error.code === "NonErrorThrown");
    expect(stringError).toBeDefined();

    // By code: only the NonErrorThrown one.
    const byCode = await replayMany(key, workflow.id, { code: "NonErrorThrown" });
    expect(byCode.status).toBe(202);
    expect(byCode.body.data).toEqual({ count: 1, replayed: [{ error_id: stringError.id, event_id: expect.any(String) }], not_replayed: [] });
    await waitFor(() => runCount(server, key, workflow.id), (count) => count === 5, "the replay by code");

    // By ids: these two, in the order given.
    const picked = [errors[2].id, errors[0].id];
    const byIds = await replayMany(key, workflow.id, { event_ids: picked });
    expect(byIds.status).toBe(202);
    expect(byIds.body.data.count).toBe(2);
    expect(byIds.body.data.replayed.map((entry: any) => entry.error_id)).toEqual(picked);
    await waitFor(() => runCount(server, key, workflow.id), (count) => count === 7, "the replays by id");

    // Fixed, then everything listed: 4 originals + 3 failed replays = 7 errors, oldest first.
    await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: [{ name: "work", code: FIXED_STEP }] } });
    const everything = await errorsOf(server, key, workflow.id);
    expect(everything.page_info.total_count).toBe(7);
    const all = await replayMany(key, workflow.id);
    expect(all.status).toBe(202);
    expect(all.body.data.count).toBe(7);
    expect(all.body.data.replayed.map((entry: any) => entry.error_id)).toEqual([...everything.data].reverse().map((item: any) => item.id));
    const runs = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 14, "seven more replays");
    const replays = runs.filter((run) => all.body.data.replayed.some((entry: any) => entry.event_id === run.trigger.event_id));
    expect(replays).toHaveLength(7);
    for (const run of replays) {
      const error = everything.data.find((item: any) => item.id === run.replay_of);
      expect(run.status).toBe("success");
      expect(run.trigger.event).toEqual(error.event.original_event);
      expect(run.steps[0].$return_value).toEqual({ fixed: error.event.original_event.body.n });
    }
    // Successful replays add no errors.
    expect((await errorsOf(server, key, workflow.id)).page_info.total_count).toBe(7);

    // A filter matching nothing replays nothing.
    expect((await replayMany(key, workflow.id, { code: "Timeout" })).body.data).toEqual({ count: 0, replayed: [], not_replayed: [] });
  });

  it("refuses unknown errors: 404 for an id that is not one of this workflow's errors, 400 for an empty list", async () => {
    const { key } = await createUser(server, "nora");
    const { workflow, errors } = await brokenWithErrors(key, "Strict", 1);
    const { workflow: other, errors: otherErrors } = await brokenWithErrors(key, "Elsewhere", 1);

    for (const id of ["1-0", "nope", otherErrors[0].id]) {
      const refused = await replayOne(key, workflow.id, id);
      expect(refused.status, id).toBe(404);
      expect(refused.body.error.code, id).toBe("NotFound");
      expect(refused.body.error.message, id).toContain(id);
    }
    const mixed = await replayMany(key, workflow.id, { event_ids: [errors[0].id, "1-0"] });
    expect(mixed.status).toBe(404);
    const empty = await replayMany(key, workflow.id, { event_ids: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details).toMatchObject({ field: "event_ids" });
    const unknownField = await replayMany(key, workflow.id, { ids: [errors[0].id] });
    expect(unknownField.status).toBe(400);
    expect((await call(server.url, "POST", `/v1/workflows/p_nothing/$errors/${errors[0].id}/replay`, { key })).status).toBe(404);

    // Nothing refused ran.
    expect(await runCount(server, key, workflow.id)).toBe(1);
    expect(await runCount(server, key, other.id)).toBe(1);
  });
});
