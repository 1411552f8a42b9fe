import { createServer, type Server } from "node:http";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";
import { modes } from "./modes.js";

/**
 * Replay from the failed step (issue 19): a replay of an error may start at
 * the step that failed, reusing the failed run's records of the steps before
 * it (their results, exports and sends; they are not run again: a counter
 * they keep does not move), with the workflow's current code or the version
 * the failed run ran. The same cases on each mode: SQLite and PostgreSQL with
 * the local queue, and PostgreSQL with BullMQ on Redis.
 */


const MODES = modes("runnel_replay_step");

/** An HTTP server on loopback counting what `$.send.http` sent it, by tag. */
class Receiver {
  readonly received: string[] = [];
  private readonly server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      this.received.push((JSON.parse(body) as { tag: string }).tag);
      response.end("ok");
    });
  });
  url = "";
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }
  count(tag: string): number {
    return this.received.filter((seen) => seen === tag).length;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Counts its runs per tag in a data store, exports a mark, sends an HTTP request and emits: it must do each once per event. */
const countStep = (receiverUrl: string) => `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps, $ }) {
    const tag = steps.trigger.event.tag;
    const runs = ((await this.store.get("count-" + tag)) ?? 0) + 1;
    await this.store.set("count-" + tag, runs);
    $.export("mark", "marked in the first run of " + tag);
    $.send.http({ method: "POST", url: ${JSON.stringify(`${receiverUrl}/sent`)}, data: { tag } });
    $.send.emit({ raw_event: { tag } });
    return { runs };
  },
})`;

const SECOND = `export default defineComponent({ async run({ steps }) { return { seen: steps.count.mark }; } })`;

/** Fails while the store's "broken" flag is set; says which code it is and what it saw of the earlier steps. */
const flaggedStep = (code: string) => `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps }) {
    if (await this.store.get("broken")) throw new Error("the flag is set (${code})");
    return { code: ${JSON.stringify(code)}, mark: steps.count.mark, second: steps.second.$return_value, runs: steps.count.$return_value.runs };
  },
})`;

describe.each(MODES)("replay from the failed step ($name)", (mode) => {
  let server: TestServer;
  let key: string;
  let drop: () => Promise<void>;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    const setup = await mode.env();
    drop = setup.drop;
    server = await startTestServer({ ...setup.env, RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    key = (await createUser(server, "replayer")).key;
  });
  afterAll(async () => {
    await server?.close();
    await drop?.();
    await receiver.close();
  });

  const storeValue = async (store: string, recordKey: string) => {
    const answer = await call(server.url, "GET", `/v1/data_stores/${store}/records/${recordKey}`, { key });
    return answer.status === 200 ? answer.body.data.value : undefined;
  };
  const setFlag = async (store: string, broken: boolean) => {
    const answer = await call(server.url, "PUT", `/v1/data_stores/${store}/records/broken`, { key, json: { value: broken } });
    expect(answer.status).toBe(200);
  };
  const getRun = async (runId: string) => (await call(server.url, "GET", `/v1/runs/${runId}`, { key })).body.data;
  const steps = (store: string, flagged = flaggedStep("v1")) => [
    { name: "count", code: countStep(receiver.url), props: { store } },
    { name: "second", code: SECOND },
    { name: "flagged", code: flagged, props: { store } },
  ];

  /** A workflow whose third step fails on the flag, and `tags.length` failed runs of it; their errors, by tag. */
  async function failedRuns(name: string, store: string, tags: string[]) {
    await setFlag(store, true);
    const workflow = await createWorkflow(server, key, { name, steps: steps(store) });
    for (const tag of tags) expect((await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: { event: { tag } } })).status).toBe(202);
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === tags.length, `${tags.length} errors`, 30_000);
    const byTag = new Map<string, any>(errors.data.map((error: any) => [error.event.original_event.tag, error]));
    return { workflow, byTag };
  }

  /** The replay run of `eventId` once it has ended. */
  const replayRun = (workflowId: string, eventId: string) =>
    waitFor(() => runsOf(server, key, workflowId), (runs) => runs.some((run) => run.trigger.event_id === eventId && run.status !== "retrying"), "the replay run", 30_000).then(
      (runs) => runs.find((run) => run.trigger.event_id === eventId),
    );

  it("starts at the failed step: earlier steps are not run again, their results, exports and sends are reused, and their sends go out once", async () => {
    const store = `replay-one-${mode.name.length}`;
    const tag = `one-${mode.name.length}`;
    const { workflow, byTag } = await failedRuns("From the failed step", store, [tag]);
    const error = byTag.get(tag);
    const failed = await getRun(error.metadata.emit_id);
    expect(failed.status).toBe("error");
    expect(failed.workflow_version).toBe(1);
    expect(failed.steps.map((step: any) => step.status)).toEqual(["success", "success", "error"]);
    // The failed run's sends were dropped with it.
    expect(failed.steps[0].sends.map((send: any) => send.status)).toEqual(["not_sent", "not_sent"]);
    expect(await storeValue(store, `count-${tag}`)).toBe(1);

    await setFlag(store, false);
    const accepted = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/${error.id}/replay`, { key, json: { from: "failed_step" } });
    expect(accepted.status).toBe(202);
    const run = await replayRun(workflow.id, accepted.body.data.event_id);
    expect(run.status).toBe("success");
    expect(run.id).not.toBe(failed.id);
    expect(run.replay_of).toBe(error.id);
    expect(run.workflow_version).toBe(1);
    expect(run.steps.map((step: any) => [step.name, step.status, step.reused])).toEqual([
      ["count", "success", true],
      ["second", "success", true],
      ["flagged", "success", false],
    ]);
    // The failed step saw the failed run's results of the earlier steps; the counter did not move.
    expect(run.steps[2].$return_value).toEqual({ code: "v1", mark: `marked in the first run of ${tag}`, second: { seen: `marked in the first run of ${tag}` }, runs: 1 });
    expect(run.steps[0].exports).toEqual({ mark: `marked in the first run of ${tag}` });
    expect(await storeValue(store, `count-${tag}`)).toBe(1);
    // The earlier step's sends go out once, with the replay (the failed run's never did).
    await waitFor(async () => receiver.count(tag), (count) => count >= 1, "the HTTP send", 15_000);
    const emitted = await call(server.url, "GET", `/v1/workflows/${workflow.id}/event_summaries?expand=event`, { key });
    expect(emitted.body.data.map((event: any) => event.event)).toEqual([{ raw_event: { tag } }]);
    const sent = await waitFor(() => getRun(run.id), (ended) => ended.steps[0].sends.every((send: any) => send.status === "delivered"), "the sends delivered");
    expect(sent.steps[0].sends.map((send: any) => send.destination)).toEqual(["http", "emit"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.count(tag)).toBe(1);
  });

  it("runs the failed run's code (with_code failed_run) or the current one (the default) after the code changed", async () => {
    const store = `replay-code-${mode.name.length}`;
    const tag = `code-${mode.name.length}`;
    const { workflow, byTag } = await failedRuns("Code choice", store, [tag]);
    const error = byTag.get(tag);
    const updated = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: steps(store, flaggedStep("v2")) } });
    expect(updated.status).toBe(200);
    await setFlag(store, false);

    const old = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/${error.id}/replay`, { key, json: { from: "failed_step", with_code: "failed_run" } });
    expect(old.status).toBe(202);
    const oldRun = await replayRun(workflow.id, old.body.data.event_id);
    expect(oldRun.status).toBe("success");
    expect(oldRun.workflow_version).toBe(1);
    expect(oldRun.steps[2].$return_value.code).toBe("v1");

    const current = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/${error.id}/replay`, { key, json: { from: "failed_step", with_code: "current" } });
    expect(current.status).toBe(202);
    const currentRun = await replayRun(workflow.id, current.body.data.event_id);
    expect(currentRun.status).toBe("success");
    expect(currentRun.workflow_version).toBe(2);
    expect(currentRun.steps[2].$return_value).toMatchObject({ code: "v2", runs: 1 });
    // Two replays, neither ran the counting step.
    expect(await storeValue(store, `count-${tag}`)).toBe(1);

    // From the trigger with the failed run's code: the whole old version again (the counter moves once).
    const whole = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/${error.id}/replay`, { key, json: { with_code: "failed_run" } });
    const wholeRun = await replayRun(workflow.id, whole.body.data.event_id);
    expect(wholeRun.workflow_version).toBe(1);
    expect(wholeRun.steps.map((step: any) => step.reused)).toEqual([false, false, false]);
    expect(wholeRun.steps[2].$return_value).toMatchObject({ code: "v1", runs: 2 });
    expect(await storeValue(store, `count-${tag}`)).toBe(2);

    // The versions the runs name, newest first.
    const versions = await call(server.url, "GET", `/v1/workflows/${workflow.id}/versions`, { key });
    expect(versions.status).toBe(200);
    expect(versions.body.current_version).toBe(2);
    expect(versions.body.data.map((version: any) => [version.version, version.current])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect(versions.body.data[1].steps.map((step: any) => step.name)).toEqual(["count", "second", "flagged"]);
    expect(versions.body.data[1].steps[2].component_id).not.toBe(versions.body.data[0].steps[2].component_id);
    expect(versions.body.data[1].steps[0].component_id).toBe(versions.body.data[0].steps[0].component_id);
  });

  it("replays several errors in bulk, each from its own failed step, and lists those it cannot replay and why", async () => {
    const store = `replay-bulk-${mode.name.length}`;
    const tags = ["a", "b", "c"].map((letter) => `bulk-${letter}-${mode.name.length}`);
    const { workflow, byTag } = await failedRuns("Bulk", store, tags);
    await setFlag(store, false);
    const answer = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/replay`, { key, json: { from: "failed_step" } });
    expect(answer.status).toBe(202);
    expect(answer.body.data.count).toBe(3);
    expect(answer.body.data.not_replayed).toEqual([]);
    const runs = await Promise.all(answer.body.data.replayed.map((item: any) => replayRun(workflow.id, item.event_id)));
    for (const run of runs) {
      const tag = run.trigger.event.tag;
      expect(run.replay_of).toBe(byTag.get(tag).id);
      expect(run.status).toBe("success");
      expect(run.steps[2].$return_value).toMatchObject({ mark: `marked in the first run of ${tag}`, runs: 1 });
      expect(await storeValue(store, `count-${tag}`)).toBe(1);
    }

    // Once the failed step is gone from the current code, a bulk replay from it lists each error with the reason.
    const renamed = steps(store).map((step) => (step.name === "flagged" ? { ...step, name: "renamed" } : step));
    expect((await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { steps: renamed } })).status).toBe(200);
    const refused = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/replay`, { key, json: { event_ids: [byTag.get(tags[0]!).id, byTag.get(tags[1]!).id], from: "failed_step" } });
    expect(refused.status).toBe(202);
    expect(refused.body.data.count).toBe(0);
    expect(refused.body.data.not_replayed).toEqual([
      { error_id: byTag.get(tags[0]!).id, reason: expect.stringContaining('The failed step "flagged" is no longer in the workflow\'s current code') },
      { error_id: byTag.get(tags[1]!).id, reason: expect.stringContaining('"with_code": "failed_run"') },
    ]);
  });
});

describe("replay from the failed step: what cannot be done", () => {
  let server: TestServer;
  let key: string;
  const receiver = new Receiver();
  beforeAll(async () => {
    await receiver.start();
    server = await startTestServer();
    key = (await createUser(server, "refused")).key;
  });
  afterAll(async () => {
    await server?.close();
    await receiver.close();
  });

  const replay = (workflowId: string, errorId: string, json?: unknown) => call(server.url, "POST", `/v1/workflows/${workflowId}/$errors/${errorId}/replay`, { key, ...(json === undefined ? {} : { json }) });

  async function oneError(name: string) {
    const workflow = await createWorkflow(server, key, {
      name,
      steps: [
        { name: "first", code: `export default defineComponent({ async run() { return 1; } })` },
        { name: "broken", code: `export default defineComponent({ async run() { throw new Error("broken"); } })` },
      ],
    });
    await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: { event: {} } });
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the error");
    return { workflow, error: errors.data[0] };
  }

  it("refuses a bad from or with_code with a 400 naming the field, and with_code given as the bulk form's code filter", async () => {
    const { workflow, error } = await oneError("Bad choice");
    const from = await replay(workflow.id, error.id, { from: "middle" });
    expect(from.status).toBe(400);
    expect(from.body.error.details.field).toBe("from");
    expect(from.body.error.message).toContain('"failed_step"');
    const code = await replay(workflow.id, error.id, { from: "failed_step", with_code: "old" });
    expect(code.status).toBe(400);
    expect(code.body.error.details.field).toBe("with_code");
    const bulk = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/replay`, { key, json: { code: "failed_run" } });
    expect(bulk.status).toBe(400);
    expect(bulk.body.error.details.field).toBe("code");
    expect(bulk.body.error.message).toContain('"with_code": "failed_run"');
  });

  it("answers 409 when the failed step is no longer in the current code, naming it and what to do; the failed run's code still works", async () => {
    const { workflow, error } = await oneError("Step gone");
    const changed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, {
      key,
      json: { steps: [{ name: "first", code: `export default defineComponent({ async run() { return 1; } })` }, { name: "fixed", code: `export default defineComponent({ async run() { return 2; } })` }] },
    });
    expect(changed.status).toBe(200);
    const refused = await replay(workflow.id, error.id, { from: "failed_step" });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe(
      'The failed step "broken" is no longer in the workflow\'s current code. Replay with the code the failed run ran ({"with_code": "failed_run"}), or from the trigger ({"from": "trigger"}).',
    );
    const old = await replay(workflow.id, error.id, { from: "failed_step", with_code: "failed_run" });
    expect(old.status).toBe(202);
    const run = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.some((listed) => listed.trigger.event_id === old.body.data.event_id), "the replay").then((runs) => runs.find((listed) => listed.trigger.event_id === old.body.data.event_id));
    // The old code: still broken, and the step before it reused.
    expect(run.status).toBe("error");
    expect(run.steps.map((step: any) => [step.name, step.status, step.reused])).toEqual([
      ["first", "success", true],
      ["broken", "error", false],
    ]);
    expect(run.workflow_version).toBe(1);
  });

  it("answers 409 when the steps before the failed one changed, and 404 for an unknown error", async () => {
    const { workflow, error } = await oneError("Earlier changed");
    const changed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, {
      key,
      json: {
        steps: [
          { name: "inserted", code: `export default defineComponent({ async run() { return 0; } })` },
          { name: "first", code: `export default defineComponent({ async run() { return 1; } })` },
          { name: "broken", code: `export default defineComponent({ async run() { throw new Error("broken"); } })` },
        ],
      },
    });
    expect(changed.status).toBe(200);
    const refused = await replay(workflow.id, error.id, { from: "failed_step" });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('The steps before "broken" changed since the failed run (it ran first; the workflow now has inserted, first)');
    const unknown = await replay(workflow.id, "1700000000000-0", { from: "failed_step" });
    expect(unknown.status).toBe(404);
  });
});

describe("replay from the failed step of a step with retries", () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer();
    key = (await createUser(server, "retrier")).key;
  });
  afterAll(() => server?.close());

  /** Fails while the store's "failures_left" is above 0, taking one off each time. */
  const FLAKY = `export default defineComponent({
    props: { store: { type: "data_store" } },
    async run({ steps }) {
      const left = (await this.store.get("failures_left")) ?? 0;
      if (left > 0) { await this.store.set("failures_left", left - 1); throw new Error("failing, " + left + " left"); }
      return { saw: steps.count.$return_value.runs };
    },
  })`;

  it("retries the failed step in the replay run, keeping the reused steps across its attempts", async () => {
    const store = "replay-retries";
    const put = (recordKey: string, value: unknown) => call(server.url, "PUT", `/v1/data_stores/${store}/records/${recordKey}`, { key, json: { value } });
    await put("failures_left", 100);
    const workflow = await createWorkflow(server, key, {
      name: "Replay with retries",
      steps: [
        { name: "count", code: `export default defineComponent({ props: { store: { type: "data_store" } }, async run() { const runs = ((await this.store.get("count")) ?? 0) + 1; await this.store.set("count", runs); return { runs }; } })`, props: { store } },
        { name: "flaky", code: FLAKY, props: { store }, retries: { max: 1, backoff: "fixed", delay_ms: 200 } },
      ],
    });
    await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: { event: {} } });
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (body) => body.data.length === 1, "the error after its retry", 30_000);
    // The failed run tried the step twice; one more failure, then success, for the replay.
    await put("failures_left", 1);
    const accepted = await call(server.url, "POST", `/v1/workflows/${workflow.id}/$errors/${errors.data[0].id}/replay`, { key, json: { from: "failed_step" } });
    expect(accepted.status).toBe(202);
    const run = await waitFor(
      () => runsOf(server, key, workflow.id).then((runs) => runs.find((listed) => listed.trigger.event_id === accepted.body.data.event_id)),
      (found) => found !== undefined && found.status !== "retrying",
      "the replay to end",
      30_000,
    );
    expect(run.status).toBe("success");
    expect(run.attempt).toBe(2);
    expect(run.attempts.map((tried: any) => [tried.step_name, tried.msg])).toEqual([["flaky", "failing, 1 left"]]);
    expect(run.steps.map((step: any) => [step.name, step.status, step.reused])).toEqual([
      ["count", "success", true],
      ["flaky", "success", false],
    ]);
    expect(run.steps[1].$return_value).toEqual({ saw: 1 });
    expect((await call(server.url, "GET", `/v1/data_stores/${store}/records/count`, { key })).body.data.value).toBe(1);
  });
});
