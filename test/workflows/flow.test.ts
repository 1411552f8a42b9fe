import { rm } from "node:fs/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "./helpers.js";
import { modes } from "./modes.js";

/**
 * $.flow.delay and $.flow.rerun (issue 19): the run is recorded `delayed`,
 * its delivery goes back to the queue, and it resumes after the wait with the
 * next step (delay) or the same step (rerun), earlier steps' results intact
 * and those steps not run again; its resume URL resumes it early; a delayed,
 * retrying or running run can be cancelled. The same cases on SQLite and
 * PostgreSQL with the local queue, and PostgreSQL with BullMQ on Redis.
 */


/** Counts its runs in a data store (readable through the API): it must run once per event, whatever the waits after it. */
const COUNT = (name: string) => `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps, $ }) {
    const key = "${name}-" + steps.trigger.event.tag;
    const runs = ((await this.store.get(key)) ?? 0) + 1;
    await this.store.set(key, runs);
    $.export("mark", "kept from before the wait");
    return { runs };
  },
})`;

/** Asks for a wait of steps.trigger.event.ms and goes on (as on the hosted service): its return value and export are kept. */
const DELAY = `export default defineComponent({
  async run({ steps, $ }) {
    const urls = $.flow.delay(steps.trigger.event.ms);
    $.export("urls", urls);
    return { asked: steps.trigger.event.ms };
  },
})`;

/** What the step after the wait saw. */
const AFTER = `export default defineComponent({
  async run({ steps, $ }) {
    return { first: steps.first.$return_value, mark: steps.first.mark, waited: steps.wait.$return_value, run: $.context.run };
  },
})`;

/** The registry components' polling pattern: start a job on the first run, poll it on reruns until it is done. */
const POLL = `export default defineComponent({
  async run({ steps, $ }) {
    const { run } = $.context;
    if (run.runs === 1) {
      $.flow.rerun(150, { job: "job-" + steps.trigger.event.tag, polls: 0 }, steps.trigger.event.max ?? 10);
      return { started: true };
    }
    if (steps.trigger.event.forever || run.context.polls < 2) {
      return $.flow.rerun(150, { ...run.context, polls: run.context.polls + 1 }, steps.trigger.event.max ?? 10);
    }
    return { done: true, runs: run.runs, context: run.context };
  },
})`;

const MODES = modes("runnel_flow");

describe.each(MODES)("flow control (delay, rerun) and cancel ($name)", (mode) => {
  let server: TestServer;
  let key: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const setup = await mode.env();
    drop = setup.drop;
    server = await startTestServer(setup.env);
    key = (await createUser(server, "flow")).key;
  });
  afterAll(async () => {
    await server?.close();
    await drop?.();
  });

  async function getRun(runId: string): Promise<any> {
    const answer = await call(server.url, "GET", `/v1/runs/${runId}`, { key });
    return answer.status === 200 ? answer.body.data : null;
  }

  async function runNow(workflowId: string, event: unknown): Promise<string> {
    const queued = await call(server.url, "POST", `/v1/workflows/${workflowId}/runs`, { key, json: { event } });
    expect(queued.status).toBe(202);
    return queued.body.data.run_id;
  }

  async function storeValue(store: string, recordKey: string): Promise<unknown> {
    const answer = await call(server.url, "GET", `/v1/data_stores/${store}/records/${recordKey}`, { key });
    return answer.status === 200 ? answer.body.data.value : undefined;
  }

  const store = `flow-${mode.name.length}`;
  const delayed = (name: string) => ({
    name,
    steps: [
      { name: "first", code: COUNT("first"), props: { store } },
      { name: "wait", code: DELAY },
      { name: "after", code: AFTER },
      { name: "last", code: COUNT("last"), props: { store } },
    ],
  });

  it("$.flow.delay: the run is delayed, then resumes with the next step, the earlier steps' results intact and those steps not run again", async () => {
    const workflow = await createWorkflow(server, key, delayed("Delay"));
    const runId = await runNow(workflow.id, { tag: "d", ms: 400 });
    const waiting = await waitFor(() => getRun(runId), (run) => run?.status === "delayed" || run?.status === "success", "the delayed run");
    expect(waiting.status).toBe("delayed");
    expect(waiting.steps.map((step: any) => step.status)).toEqual(["success", "success", "pending", "pending"]);
    expect(waiting.next_attempt_at_ms).toBeGreaterThanOrEqual(waiting.steps[1].started_at_ms + 400);
    const urls = waiting.steps[1].exports.urls;
    expect(urls.resume_url).toMatch(new RegExp(`^${server.url}/flow/.+/${runId}/[A-Za-z0-9_-]{32}/resume$`));
    expect(urls.cancel_url).toBe(urls.resume_url.replace(/resume$/, "cancel"));
    // Listed as delayed too.
    expect((await runsOf(server, key, workflow.id))[0]).toMatchObject({ id: runId, status: "delayed" });

    const run = await waitFor(() => getRun(runId), (run) => run.status !== "delayed", "the run to resume and end", 20_000);
    expect(run.status).toBe("success");
    expect(run.steps.map((step: any) => step.status)).toEqual(["success", "success", "success", "success"]);
    // The step after the wait began once the wait was over (two recorded times, not a speed).
    expect(run.steps[2].started_at_ms).toBeGreaterThanOrEqual(waiting.next_attempt_at_ms);
    expect(run.steps[2].$return_value).toEqual({ first: { runs: 1 }, mark: "kept from before the wait", waited: { asked: 400 }, run: { runs: 1 } });
    expect(await storeValue(store, "first-d")).toBe(1);
    expect(await storeValue(store, "last-d")).toBe(1);
    expect(run.next_attempt_at_ms).toBeNull();
    expect((await runsOf(server, key, workflow.id)).map((listed) => listed.id)).toEqual([runId]);
  });

  it("$.flow.rerun: the registry components' polling pattern reruns the step with $.context.run.runs and context, three times, then goes on", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Poll",
      steps: [
        { name: "first", code: COUNT("first"), props: { store } },
        { name: "poll", code: POLL },
        { name: "after", code: `export default defineComponent({ async run({ steps, $ }) { return { polled: steps.poll.$return_value, first: steps.first.$return_value, run: $.context.run }; } })` },
      ],
    });
    const runId = await runNow(workflow.id, { tag: "p" });
    const run = await waitFor(() => getRun(runId), (run) => run?.status === "success" || run?.status === "error", "the polling run to end", 20_000);
    expect(run.status).toBe("success");
    expect(run.steps[1].$return_value).toEqual({ done: true, runs: 4, context: { job: "job-p", polls: 2 } });
    expect(run.steps[2].$return_value).toEqual({ polled: { done: true, runs: 4, context: { job: "job-p", polls: 2 } }, first: { runs: 1 }, run: { runs: 1 } });
    expect(await storeValue(store, "first-p")).toBe(1);
  });

  it("$.flow.rerun past maxReruns fails the step, saying so, with one error in $errors", async () => {
    const workflow = await createWorkflow(server, key, { name: "Poll forever", steps: [{ name: "poll", code: POLL }] });
    const runId = await runNow(workflow.id, { tag: "f", forever: true, max: 2 });
    const run = await waitFor(() => getRun(runId), (run) => run?.status === "error" || run?.status === "success", "the run to fail", 20_000);
    expect(run.status).toBe("error");
    expect(run.error.msg).toContain("past its limit of 2 reruns");
    expect(run.error.msg).toContain('Step "poll"');
    const errors = await errorsOf(server, key, workflow.id);
    expect(errors.data).toHaveLength(1);
  });

  it("refuses a bad delay in the step, naming it", async () => {
    const workflow = await createWorkflow(server, key, { name: "Bad delay", steps: [{ name: "wait", code: DELAY }] });
    const negative = await runNow(workflow.id, { ms: -1 });
    const tooLong = await runNow(workflow.id, { ms: 8 * 86_400_000 });
    const [a, b] = await Promise.all([negative, tooLong].map((id) => waitFor(() => getRun(id), (run) => run !== null && run.status !== "delayed", "the failure")));
    expect(a.status).toBe("error");
    expect(a.error.msg).toContain("$.flow.delay(ms): the delay must be a number of milliseconds, 0 or more; got -1");
    expect(b.status).toBe("error");
    expect(b.error.msg).toContain("past the longest wait");
  });

  it("a resume URL resumes a delayed run at once, its request reaching the next step; a cancel URL of an ended run is refused", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Resume early",
      steps: [
        { name: "wait", code: DELAY },
        { name: "after", code: `export default defineComponent({ async run({ $ }) { return { callback: $.context.run.callback_request?.body ?? null, method: $.context.run.callback_request?.method ?? null }; } })` },
      ],
    });
    const runId = await runNow(workflow.id, { ms: 600_000 });
    const waiting = await waitFor(() => getRun(runId), (run) => run?.status === "delayed", "the delayed run");
    const { resume_url, cancel_url } = waiting.steps[0].exports.urls;
    // A wrong token is not found, and says nothing more.
    const wrong = await fetch(resume_url.replace(/\/[A-Za-z0-9_-]{32}\/resume$/, `/${"x".repeat(32)}/resume`), { method: "POST" });
    expect(wrong.status).toBe(404);
    const resumed = await fetch(resume_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ job: "done" }) });
    expect(resumed.status).toBe(202);
    const run = await waitFor(() => getRun(runId), (run) => run.status !== "delayed", "the run to resume", 10_000);
    expect(run.status).toBe("success");
    expect(run.steps[1].$return_value).toEqual({ callback: { job: "done" }, method: "POST" });
    expect((await fetch(cancel_url)).status).toBe(404);
  });

  it("$.flow.suspend waits for its resume URL (the request reaching the next step), and times out into an error without it", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Suspend",
      steps: [
        { name: "ask", code: `export default defineComponent({ async run({ steps, $ }) { $.export("urls", $.flow.suspend(steps.trigger.event.timeout)); return "asked"; } })` },
        { name: "after", code: `export default defineComponent({ async run({ $ }) { return { approved: $.context.run.callback_request?.body ?? null }; } })` },
      ],
    });
    const approvedId = await runNow(workflow.id, { timeout: 600_000 });
    const timedOutId = await runNow(workflow.id, { timeout: 300 });
    const waiting = await waitFor(() => getRun(approvedId), (run) => run?.status === "delayed", "the suspended run");
    expect((await fetch(waiting.steps[0].exports.urls.resume_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ok: "yes" }) })).status).toBe(202);
    const approved = await waitFor(() => getRun(approvedId), (run) => run.status !== "delayed", "the resumed run", 10_000);
    expect(approved.status).toBe("success");
    expect(approved.steps[1].$return_value).toEqual({ approved: { ok: "yes" } });
    const timedOut = await waitFor(() => getRun(timedOutId), (run) => run !== null && run.status !== "delayed", "the timed-out run", 10_000);
    expect(timedOut.status).toBe("error");
    expect(timedOut.error).toMatchObject({ code: "Timeout", name: "SuspendTimeout" });
    expect(timedOut.error.msg).toContain('Step "ask" suspended the run ($.flow.suspend) and its resume URL was not called before the timeout');
    expect(timedOut.steps.map((step: any) => step.status)).toEqual(["success", "skipped"]);
    expect((await errorsOf(server, key, workflow.id)).data).toHaveLength(1);
  });

  it("cancels a delayed run (API and cancel URL): it never resumes, is recorded cancelled with who and when, its sends dropped, no $errors", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Cancel delayed",
      steps: [
        { name: "first", code: `export default defineComponent({ async run({ $ }) { $.send.http({ method: "POST", url: "https://example.com/never" }); return 1; } })` },
        { name: "wait", code: DELAY },
        { name: "last", code: COUNT("last"), props: { store } },
      ],
    });
    const runId = await runNow(workflow.id, { tag: "c", ms: 1_000 });
    await waitFor(() => getRun(runId), (run) => run?.status === "delayed", "the delayed run");
    const answer = await call(server.url, "POST", `/v1/runs/${runId}/cancel`, { key });
    expect(answer.status).toBe(200);
    const me = (await call(server.url, "GET", "/v1/users/me", { key })).body.data;
    expect(answer.body.data).toMatchObject({ id: runId, status: "cancelled", cancelled_by: me.id, next_attempt_at_ms: null });
    expect(answer.body.data.steps[0].sends[0]).toMatchObject({ status: "not_sent" });
    // Past its due time, it stayed cancelled and its last step never ran.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await getRun(runId)).toMatchObject({ status: "cancelled" });
    expect(await storeValue(store, "last-c")).toBeUndefined();
    expect((await errorsOf(server, key, workflow.id)).data).toEqual([]);
    // Again: it has ended.
    const again = await call(server.url, "POST", `/v1/runs/${runId}/cancel`, { key });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain("has ended already (cancelled)");

    const second = await runNow(workflow.id, { tag: "u", ms: 600_000 });
    const waiting = await waitFor(() => getRun(second), (run) => run?.status === "delayed", "the second delayed run");
    const viaUrl = await fetch(waiting.steps[1].exports.urls.cancel_url, { method: "POST" });
    expect(viaUrl.status).toBe(200);
    expect(await getRun(second)).toMatchObject({ status: "cancelled", cancelled_by: "cancel_url" });
  });

  it("cancels a retrying run", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Cancel retrying",
      steps: [{ name: "down", code: `export default defineComponent({ async run() { throw new Error("down"); } })` }],
      settings: { retries: { max: 3, backoff: "fixed", delay_ms: 600_000 } },
    });
    const runId = await runNow(workflow.id, {});
    await waitFor(() => getRun(runId), (run) => run?.status === "retrying", "the retrying run");
    const answer = await call(server.url, "POST", `/v1/runs/${runId}/cancel`, { key });
    expect(answer.status).toBe(200);
    expect(answer.body.data.status).toBe("cancelled");
    expect((await errorsOf(server, key, workflow.id)).data).toEqual([]);
  });

  it("cancels a running run: it stops before its next step and is recorded cancelled", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Cancel running",
      steps: [
        { name: "slow", code: `export default defineComponent({ async run() { await new Promise((resolve) => setTimeout(resolve, 20_000)); return "slow done"; } })` },
        { name: "last", code: COUNT("last"), props: { store } },
      ],
    });
    const runId = await runNow(workflow.id, { tag: "r" });
    // Cancelled while its first step runs (a cancel that comes before the run starts is a 404: retried).
    const answer = await waitFor(() => call(server.url, "POST", `/v1/runs/${runId}/cancel`, { key }), (answer) => answer.status !== 404, "the run to be running");
    expect(answer.status).toBe(202);
    expect(answer.body.data).toEqual({ run_id: runId, status: "cancelling" });
    // The step in progress is given up where it waits (20 s): the run is recorded at once. Under a heavy load the
    // runner may not act on the cancel within its grace (2 s), and is stopped instead: the run's error then says so.
    const run = await waitFor(() => getRun(runId), (run) => run !== null, "the cancelled run's record", 8_000);
    expect(run.status).toBe("cancelled");
    if (run.error !== null) expect(run.error.code).toBe("Cancelled");
    // The step given up is recorded as it was reported (an error saying so) or not at all (skipped); the next never ran.
    expect(["error", "skipped"]).toContain(run.steps[0].status);
    expect(run.steps[1].status).toBe("skipped");
    expect(run.steps[0].$return_value).toBeNull();
    expect(await storeValue(store, "last-r")).toBeUndefined();
    expect((await errorsOf(server, key, workflow.id)).data).toEqual([]);
  });

  // The runner is the same in every mode: once is enough (a cancel reaches it the same way in all, tested above).
  it.runIf(mode.name === "SQLite, local queue")("cancels a running run whose step never yields: its runner is stopped, the run recorded cancelled long before the time limit, the next run served", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Cancel busy",
      steps: [
        {
          name: "spin",
          code: `export default defineComponent({ props: { store: { type: "data_store" } }, async run({ steps }) { if (steps.trigger.event.spin) { await this.store.set("spinning", true); while (true) {} } return "quick"; } })`,
          props: { store },
        },
        { name: "last", code: COUNT("last"), props: { store } },
      ],
    });
    const runId = await runNow(workflow.id, { tag: "busy", spin: true });
    await waitFor(() => storeValue(store, "spinning"), (value) => value === true, "the step to spin");
    const answer = await waitFor(() => call(server.url, "POST", `/v1/runs/${runId}/cancel`, { key }), (answer) => answer.status !== 404, "the run to be running");
    expect(answer.status).toBe(202);
    // Manual runs have 60 s: the step never stops on its own, so only the runner's stop records the run.
    const run = await waitFor(() => getRun(runId), (run) => run !== null, "the cancelled run's record", 20_000);
    expect(run.status).toBe("cancelled");
    // The step that was stopped shows why, as the run's error (no $errors event for it).
    expect(run.error).toMatchObject({ code: "Cancelled", cellId: workflow.steps[0].id });
    expect(run.steps[0].status).toBe("error");
    expect(run.steps[1].status).toBe("skipped");
    expect(await storeValue(store, "last-busy")).toBeUndefined();
    expect((await errorsOf(server, key, workflow.id)).data).toEqual([]);
    // The same workflow runs again, in a new runner.
    const next = await runNow(workflow.id, { tag: "after-busy" });
    expect(await waitFor(() => getRun(next), (run) => run?.status === "success", "the next run")).toMatchObject({ status: "success" });
    expect(await storeValue(store, "last-after-busy")).toBe(1);
  });

  it("answers 404 for an unknown run", async () => {
    const answer = await call(server.url, "POST", "/v1/runs/run_nope/cancel", { key });
    expect(answer.status).toBe(404);
    expect(answer.body.error.message).toContain("run_nope");
  });
});

describe("a delayed run across a restart of the embedded server", () => {
  it("resumes with the next step after the restart, at its time, with the earlier step's results", async () => {
    let server = await startTestServer({}, { keepData: true });
    const dataDir = server.dataDir;
    try {
      const key = (await createUser(server, "restarter")).key;
      const store = "restart-flow";
      const workflow = await createWorkflow(server, key, {
        name: "Across a restart",
        steps: [
          { name: "first", code: COUNT("first"), props: { store } },
          { name: "wait", code: DELAY },
          { name: "after", code: AFTER },
        ],
      });
      const queued = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key, json: { event: { tag: "x", ms: 1500 } } });
      const runId = queued.body.data.run_id;
      await waitFor(() => call(server.url, "GET", `/v1/runs/${runId}`, { key }), (answer) => answer.status === 200 && answer.body.data.status === "delayed", "the delayed run");
      await server.close();
      server = await startTestServer({}, { dataDir, keepData: true });
      const run = await waitFor(() => call(server.url, "GET", `/v1/runs/${runId}`, { key }).then((answer) => answer.body.data), (run) => run.status !== "delayed", "the run to resume", 20_000);
      expect(run.status).toBe("success");
      expect(run.steps[2].$return_value).toMatchObject({ first: { runs: 1 }, mark: "kept from before the wait", waited: { asked: 1500 } });
      expect((await call(server.url, "GET", `/v1/data_stores/${store}/records/first-x`, { key })).body.data.value).toBe(1);
    } finally {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
