import { rm } from "node:fs/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";
import { runLines, runRow } from "../../src/cli/workflow-output.js";
import { modes } from "./modes.js";

/**
 * Retries of a failed step (settings.retries, a step's own retries): the run
 * stops at the failed step, waits (`retrying`, visible in the runs API) and
 * resumes there after the backoff, with the earlier steps' results kept and
 * those steps not run again. The same cases on each mode: SQLite and
 * PostgreSQL with the local queue, and PostgreSQL with BullMQ on Redis.
 */


/** Counts its runs in a data store (readable through the API): it must run once per event, whatever the retries after it. */
const FIRST = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps, $ }) {
    const key = "first-" + steps.trigger.event.body.tag;
    const runs = ((await this.store.get(key)) ?? 0) + 1;
    await this.store.set(key, runs);
    $.export("mark", "kept from the first attempt");
    return { runs };
  },
})`;

/** Fails until its third try; counts its tries in its own $.service.db (written even by a failed attempt). */
const FLAKY = `export default defineComponent({
  props: { db: "$.service.db" },
  async run({ steps }) {
    const key = "tries-" + steps.trigger.event.body.tag;
    const tries = (this.db.get(key) ?? 0) + 1;
    this.db.set(key, tries);
    if (tries < 3) throw new Error("flaky: try " + tries);
    return { tries, saw: steps.first.mark, firstRuns: steps.first.$return_value.runs };
  },
})`;

const ALWAYS_FAILS = `export default defineComponent({ async run() { throw new Error("down for good"); } })`;

const MODES = modes("runnel_retry");

async function post(url: string, body: unknown): Promise<number> {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await answer.arrayBuffer();
  return answer.status;
}

describe.each(MODES)("retries ($name)", (mode) => {
  let server: TestServer;
  let key: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const setup = await mode.env();
    drop = setup.drop;
    server = await startTestServer(setup.env);
    key = (await createUser(server, "retrier")).key;
  });
  afterAll(async () => {
    await server?.close();
    await drop?.();
  });

  async function getRun(runId: string): Promise<any> {
    const answer = await call(server.url, "GET", `/v1/runs/${runId}`, { key });
    expect(answer.status).toBe(200);
    return answer.body.data;
  }

  async function storeValue(store: string, recordKey: string): Promise<unknown> {
    const answer = await call(server.url, "GET", `/v1/data_stores/${store}/records/${recordKey}`, { key });
    return answer.status === 200 ? answer.body.data.value : undefined;
  }

  it("retries a flaky step until its third try succeeds, resuming at it: the earlier step runs once and its results are kept", async () => {
    const store = `counters-${mode.name.length}`;
    const workflow = await createWorkflow(server, key, {
      name: "Flaky",
      trigger: { type: "http" },
      steps: [
        { name: "first", code: FIRST, props: { store } },
        { name: "flaky", code: FLAKY },
        { name: "after", code: `export default defineComponent({ async run({ steps }) { return { got: steps.flaky.$return_value.tries }; } })` },
      ],
      settings: { retries: { max: 3, backoff: "fixed", delay_ms: 1000 } },
    });
    expect(workflow.settings.retries).toEqual({ max: 3, backoff: "fixed", delay_ms: 1000, max_delay_ms: 3_600_000 });
    expect(await post(workflow.trigger.endpoint_url, { tag: "a" })).toBe(200);

    // Between attempts the run is listed and readable as retrying, saying when the next attempt is due.
    const [waiting] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs[0]?.status === "retrying", "the run waiting to retry");
    expect(waiting.next_attempt_at_ms).toBeGreaterThan(waiting.attempts[0].failed_at_ms);
    expect(waiting.attempts[0]).toMatchObject({ attempt: 1, step_name: "flaky", code: "UserError", msg: "flaky: try 1", will_retry: true });
    expect(waiting.steps.map((step: any) => step.status)).toEqual(["success", "error", "pending"]);
    expect(waiting.error).toMatchObject({ code: "UserError", msg: "flaky: try 1" });
    // As `runnel runs` prints it.
    expect(runRow(waiting)[2]).toBe(`retrying (attempt 1, next at ${new Date(waiting.next_attempt_at_ms).toISOString()})`);
    expect(runLines(waiting)).toContain(`  next try:  ${new Date(waiting.next_attempt_at_ms).toISOString()} (a step failed; the run resumes at it then)`);

    const run = await waitFor(() => getRun(waiting.id), (run) => run.status !== "retrying", "the run to end", 30_000);
    expect(run.status).toBe("success");
    expect(run.attempt).toBe(3);
    expect(run.next_attempt_at_ms).toBeNull();
    expect(run.error).toBeNull();
    expect(run.attempts.map((tried: any) => [tried.attempt, tried.msg, tried.will_retry])).toEqual([
      [1, "flaky: try 1", true],
      [2, "flaky: try 2", true],
    ]);
    // Each retry began once its wait was over (the order of two recorded times, not a speed).
    expect(run.steps[1].started_at_ms).toBeGreaterThanOrEqual(run.attempts[1].next_attempt_at_ms);
    expect(run.steps.map((step: any) => step.status)).toEqual(["success", "success", "success"]);
    expect(run.steps[1].$return_value).toEqual({ tries: 3, saw: "kept from the first attempt", firstRuns: 1 });
    expect(run.steps[2].$return_value).toEqual({ got: 3 });
    // The earlier step ran once: its counter did not move with the retries.
    expect(await storeValue(store, "first-a")).toBe(1);
    // One run, under one id, and no error: the final attempt succeeded.
    expect((await runsOf(server, key, workflow.id)).map((listed) => listed.id)).toEqual([waiting.id]);
    expect(runRow(run)[2]).toBe("success (attempt 3)");
    expect(runLines(run).filter((line) => line.startsWith("  failed:"))).toEqual([
      `  failed:    flaky try 1 at ${new Date(run.attempts[0].failed_at_ms).toISOString()}: UserError: flaky: try 1 (retried at ${new Date(run.attempts[0].next_attempt_at_ms).toISOString()})`,
      `  failed:    flaky try 2 at ${new Date(run.attempts[1].failed_at_ms).toISOString()}: UserError: flaky: try 2 (retried at ${new Date(run.attempts[1].next_attempt_at_ms).toISOString()})`,
    ]);
    expect((await errorsOf(server, key, workflow.id)).data).toEqual([]);
  });

  it("backs off exponentially with jitter, capped at max_delay_ms, then records the final failure once in $errors", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Backoff",
      steps: [{ name: "down", code: ALWAYS_FAILS }],
      settings: { retries: { max: 3, backoff: "exponential", delay_ms: 200, max_delay_ms: 600 } },
    });
    const queued = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: { event: { n: 1 } } });
    expect(queued.status).toBe(202);
    const run = await waitFor(() => call(server.url, "GET", `/v1/runs/${queued.body.data.run_id}`, { key }), (answer) => answer.status === 200 && answer.body.data.status === "error", "the final failure", 30_000).then((answer) => answer.body.data);
    expect(run.attempt).toBe(4);
    const waits = run.attempts.slice(0, 3).map((tried: any) => tried.next_attempt_at_ms - tried.failed_at_ms);
    // 200, 400, 800 capped at 600; each times 1 ± 0.2.
    expect(waits[0]).toBeGreaterThanOrEqual(160);
    expect(waits[0]).toBeLessThanOrEqual(240);
    expect(waits[1]).toBeGreaterThanOrEqual(320);
    expect(waits[1]).toBeLessThanOrEqual(480);
    expect(waits[2]).toBeGreaterThanOrEqual(480);
    expect(waits[2]).toBeLessThanOrEqual(600);
    expect(run.attempts[3]).toMatchObject({ attempt: 4, will_retry: false, next_attempt_at_ms: null });
    const errors = await errorsOf(server, key, workflow.id);
    expect(errors.data).toHaveLength(1);
    expect(errors.data[0].event.error).toMatchObject({ code: "UserError", msg: "down for good", cellId: workflow.steps[0].id, attempt: 4, will_retry: false });
    expect(errors.data[0].metadata.emit_id).toBe(run.id);
  });

  it("puts every failed attempt in $errors with errors_on_each_attempt", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Each attempt",
      steps: [{ name: "down", code: ALWAYS_FAILS }],
      settings: { retries: { max: 2, backoff: "fixed", delay_ms: 50 }, errors_on_each_attempt: true },
    });
    expect(workflow.settings.errors_on_each_attempt).toBe(true);
    const queued = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: {} });
    const errors = await waitFor(() => errorsOf(server, key, workflow.id), (errors) => errors.data.length === 3, "three errors", 30_000);
    const oldestFirst = [...errors.data].sort((a: any, b: any) => a.indexed_at_ms - b.indexed_at_ms || a.id.localeCompare(b.id));
    expect(oldestFirst.map((error: any) => [error.event.error.attempt, error.event.error.will_retry])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
    expect(oldestFirst.every((error: any) => error.metadata.emit_id === queued.body.data.run_id)).toBe(true);
    const run = (await call(server.url, "GET", `/v1/runs/${queued.body.data.run_id}`, { key })).body.data;
    expect(run.status).toBe("error");
  });

  it("does not retry what cannot be fixed by trying again: retryable false, a ConfigurationError; a step's own retries override the workflow's", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Not retried",
      steps: [
        {
          name: "pick",
          code: `export default defineComponent({ async run({ steps }) {
            const kind = steps.trigger.event.kind;
            if (kind === "final") { const error = new Error("refused for good"); error.retryable = false; throw error; }
            if (kind === "config") { const error = new Error("bad settings"); error.name = "ConfigurationError"; throw error; }
            if (kind === "forced") { const error = new Error("looks final, is not"); error.name = "ConfigurationError"; error.retryable = true; throw error; }
            throw new Error("plain");
          } })`,
          retries: { max: 1, backoff: "fixed", delay_ms: 0 },
        },
      ],
      settings: { retries: { max: 5, backoff: "fixed", delay_ms: 0 } },
    });
    expect(workflow.steps[0].retries).toEqual({ max: 1, backoff: "fixed", delay_ms: 0, max_delay_ms: 3_600_000 });
    const runOf = async (event: unknown) => {
      const queued = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: { event } });
      return waitFor(() => call(server.url, "GET", `/v1/runs/${queued.body.data.run_id}`, { key }), (answer) => answer.status === 200 && answer.body.data.status === "error", "the failure", 30_000).then((answer) => answer.body.data);
    };
    const [final, config, forced, plain] = await Promise.all([runOf({ kind: "final" }), runOf({ kind: "config" }), runOf({ kind: "forced" }), runOf({ kind: "plain" })]);
    expect(final.attempts.map((tried: any) => tried.will_retry)).toEqual([false]);
    expect(config.attempts.map((tried: any) => tried.will_retry)).toEqual([false]);
    // The step's max (1), not the workflow's (5): two tries in all.
    expect(forced.attempts.map((tried: any) => tried.will_retry)).toEqual([true, false]);
    expect(plain.attempts.map((tried: any) => tried.will_retry)).toEqual([true, false]);
    expect(plain.attempt).toBe(2);
  });
});

describe("a run waiting to retry across a restart of the embedded server", () => {
  it("resumes at the failed step after the restart, at its time, with the earlier step's results", async () => {
    let server = await startTestServer({}, { keepData: true });
    const dataDir = server.dataDir;
    try {
      const key = (await createUser(server, "restarter")).key;
      const workflow = await createWorkflow(server, key, {
        name: "Across a restart",
        trigger: { type: "http" },
        steps: [
          { name: "first", code: FIRST, props: { store: "restart-counters" } },
          { name: "flaky", code: FLAKY },
        ],
        settings: { retries: { max: 2, backoff: "fixed", delay_ms: 1500 } },
      });
      expect(await post(workflow.trigger.endpoint_url, { tag: "r" })).toBe(200);
      const [waiting] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs[0]?.status === "retrying", "the run waiting to retry");
      await server.close();
      server = await startTestServer({}, { dataDir, keepData: true });
      const run = await waitFor(() => call(server.url, "GET", `/v1/runs/${waiting.id}`, { key }).then((answer) => answer.body.data), (run) => run.status !== "retrying", "the run to end", 30_000);
      expect(run.status).toBe("success");
      expect(run.attempt).toBe(3);
      expect(run.steps[1].$return_value).toEqual({ tries: 3, saw: "kept from the first attempt", firstRuns: 1 });
      expect((await call(server.url, "GET", "/v1/data_stores/restart-counters/records/first-r", { key })).body.data.value).toBe(1);
    } finally {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("retry settings out of range", () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer();
    key = (await createUser(server, "checker")).key;
  });
  afterAll(() => server?.close());

  const STEP = { name: "one", code: "export default defineComponent({ async run() { return 1; } })" };

  it.each([
    [{ settings: { retries: { max: 101 } } }, "settings.retries.max"],
    [{ settings: { retries: { max: -1 } } }, "settings.retries.max"],
    [{ settings: { retries: { max: 1.5 } } }, "settings.retries.max"],
    [{ settings: { retries: { max: 2, backoff: "linear" } } }, "settings.retries.backoff"],
    [{ settings: { retries: { delay_ms: -5 } } }, "settings.retries.delay_ms"],
    [{ settings: { retries: { delay_ms: 8 * 86_400_000 } } }, "settings.retries.delay_ms"],
    [{ settings: { retries: { delay_ms: 5000, max_delay_ms: 1000 } } }, "settings.retries.max_delay_ms"],
    [{ settings: { retries: { max: 2, tries: 3 } } }, "settings.retries.tries"],
    [{ settings: { retries: 3 } }, "settings.retries"],
    [{ settings: { errors_on_each_attempt: "yes" } }, "settings.errors_on_each_attempt"],
    [{ steps: [{ ...STEP, retries: { max: 1000 } }] }, "steps[0].retries.max"],
  ])("refuses %j at save time, naming %s", async (body, field) => {
    const answer = await call(server.url, "POST", "/v1/workflows", { key, json: { name: "Bad retries", steps: [STEP], ...body } });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.field).toBe(field);
    expect(answer.body.error.message).toContain(field);
  });

  it("keeps the retries an update leaves out, and refuses a bad one on update too", async () => {
    const workflow = await createWorkflow(server, key, { name: "Kept retries", steps: [{ ...STEP, retries: { max: 2 } }], settings: { retries: { max: 4, backoff: "fixed", delay_ms: 10 } } });
    const renamed = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { name: "Kept retries 2" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.settings.retries).toEqual({ max: 4, backoff: "fixed", delay_ms: 10, max_delay_ms: 3_600_000 });
    expect(renamed.body.data.steps[0].retries).toMatchObject({ max: 2 });
    const refused = await call(server.url, "PUT", `/v1/workflows/${workflow.id}`, { key, json: { settings: { retries: { max: 200 } } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.field).toBe("settings.retries.max");
  });
});
