import { createServer, type IncomingMessage, type Server } from "node:http";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SseParser, type SseMessage } from "../../src/client/sse-parser.js";
import { freePort } from "../helpers/ports.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "./helpers.js";

/**
 * The `$` of a step: return, $.export, $summary, $.flow.exit, $.respond,
 * $.context; and `$.send.*`, carried out after the run is recorded.
 */

interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage["headers"];
  body: string;
  receivedAt: number;
  /** What GET /v1/runs/<id> answered while the request was being received (the run id travels in the body). */
  runSeen?: { status: number; body: any };
}

/**
 * A local HTTP server the tests' steps and sends talk to: `/gate/<name>` holds
 * its answer until the test opens the gate; anything else is recorded.
 */
class Receiver {
  readonly received: Received[] = [];
  private readonly gates = new Map<string, { open: boolean; waiting: Array<() => void>; arrived: number }>();
  private server!: Server;
  url = "";

  constructor(private readonly lookUpRun?: (runId: string) => Promise<{ status: number; body: any }>) {}

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", async () => {
        const url = new URL(request.url ?? "/", "http://localhost");
        if (url.pathname.startsWith("/gate/")) {
          const gate = this.gate(url.pathname.slice("/gate/".length));
          gate.arrived++;
          const answer = () => response.end("open");
          if (gate.open) answer();
          else gate.waiting.push(answer);
          return;
        }
        const entry: Received = { method: request.method ?? "", path: url.pathname, query: Object.fromEntries(url.searchParams), headers: request.headers, body, receivedAt: Date.now() };
        try {
          const runId = (JSON.parse(body) as { runId?: unknown }).runId;
          if (typeof runId === "string" && this.lookUpRun) entry.runSeen = await this.lookUpRun(runId);
        } catch {
          // Not JSON: nothing to look up.
        }
        this.received.push(entry);
        // /flaky fails the first attempt of each send (told apart by its idempotency key), then takes it.
        const key = request.headers["idempotency-key"];
        const flakyFirst = url.pathname === "/flaky" && this.received.filter((seen) => seen.path === "/flaky" && seen.headers["idempotency-key"] === key).length === 1;
        response.statusCode = url.pathname === "/fails" || flakyFirst ? 500 : 200;
        response.end("ok");
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  gate(name: string) {
    let gate = this.gates.get(name);
    if (!gate) this.gates.set(name, (gate = { open: false, waiting: [], arrived: 0 }));
    return gate;
  }

  open(name: string): void {
    const gate = this.gate(name);
    gate.open = true;
    for (const answer of gate.waiting.splice(0)) answer();
  }

  close(): Promise<void> {
    for (const gate of this.gates.values()) for (const answer of gate.waiting.splice(0)) answer();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let server: TestServer;
let key: string;
let userId: string;
let receiver: Receiver;
beforeAll(async () => {
  // Sends are tried three times, 50 ms then 100 ms apart: a failing destination is given up within the test.
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1", RUNNEL_SEND_MAX_ATTEMPTS: "3", RUNNEL_SEND_RETRY_BASE_MS: "50" });
  ({ id: userId, key } = await createUser(server, "helper"));
  receiver = new Receiver((runId) => call(server.url, "GET", `/v1/runs/${runId}`, { key }));
  await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await server.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

const step = (name: string, run: string, extra: Record<string, unknown> = {}) => ({
  name,
  code: `export default defineComponent({ async run({ steps, $ }) { ${run} } })`,
  ...extra,
});

async function onlyRun(workflowId: string): Promise<any> {
  const [run] = await waitFor(() => runsOf(server, key, workflowId), (runs) => runs.length === 1, "the run");
  return run;
}

describe("return, $.export, $summary", () => {
  it("makes the return value and the exports visible to later steps and records the summary", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Exports",
      trigger: { type: "http" },
      steps: [
        step("make", `$.export("count", 3); $.export("info", { tags: ["a", "b"] }); $.export("$summary", "made three things"); return "made";`),
        step("use", `return { value: steps.make.$return_value, count: steps.make.count, tag: steps.make.info.tags[1], summary: steps.make.$summary, keys: Object.keys(steps.make).sort() };`),
        step("nothing", `/* returns nothing */`),
      ],
    });
    await post(workflow.trigger.endpoint_url, {});
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("success");
    expect(run.steps[0]).toMatchObject({ status: "success", $return_value: "made", exports: { count: 3, info: { tags: ["a", "b"] } }, summary: "made three things" });
    expect(run.steps[0].exports).not.toHaveProperty("$summary");
    expect(run.steps[1].$return_value).toEqual({ value: "made", count: 3, tag: "b", summary: "made three things", keys: ["$return_value", "$summary", "count", "info"] });
    expect(run.steps[2]).toMatchObject({ status: "success", $return_value: null, exports: {}, summary: null });
  });
});

describe("$.flow.exit", () => {
  it.each([
    ["returned", `return $.flow.exit("nothing to do");`],
    ["called without return", `$.flow.exit("nothing to do"); throw new Error("not reached");`],
  ])("ends the run as exited when %s; later steps are skipped", async (how, code) => {
    const workflow = await createWorkflow(server, key, {
      name: `Exit ${how}`,
      trigger: { type: "http" },
      steps: [step("before", `return 1;`), step("leave", `$.export("seen", true); ${code}`), step("after", `return "should not run";`), step("last", `return 2;`)],
    });
    await post(workflow.trigger.endpoint_url, {});
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("exited");
    expect(run.exit_reason).toBe("nothing to do");
    expect(run.error).toBeNull();
    expect(run.steps.map((s: any) => [s.name, s.status])).toEqual([
      ["before", "success"],
      ["leave", "exited"],
      ["after", "skipped"],
      ["last", "skipped"],
    ]);
    expect(run.steps[1].exports).toEqual({ seen: true });
    expect(run.steps[2]).toMatchObject({ $return_value: null, started_at_ms: null, logs: [] });
    // An exit is not an error: nothing is listed in $errors.
    const errors = await call(server.url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries`, { key });
    expect(errors.body.data).toEqual([]);
  });
});

describe("$.respond", () => {
  it("answers the HTTP caller with the status, headers and JSON body a later step gives, when respond is workflow", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Responder",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        step("compute", `return steps.trigger.event.body.a + steps.trigger.event.body.b;`),
        step("reply", `await $.respond({ status: 202, headers: { "x-sum": String(steps.compute.$return_value) }, body: { sum: steps.compute.$return_value, query: steps.trigger.event.query } }); return "answered";`),
      ],
    });
    const answer = await post(`${workflow.trigger.endpoint_url}?q=1`, { a: 2, b: 3 });
    expect(answer.status).toBe(202);
    expect(answer.headers.get("x-sum")).toBe("5");
    expect(answer.headers.get("content-type")).toContain("application/json");
    // The body holds what the steps computed: the caller waited for the run.
    expect(await answer.json()).toEqual({ sum: 5, query: { q: "1" } });
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("success");
    expect(run.steps[1].$return_value).toBe("answered");
  });

  it("takes a numeric-string status and answers before the run's later steps finish", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Early responder",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        step("reply", `$.respond({ status: "201", body: "created" }); return 1;`),
        step("slow", `await fetch(${JSON.stringify(`${receiver.url}/gate/early-responder`)}); return "after the gate";`),
      ],
    });
    const answer = await post(workflow.trigger.endpoint_url, {});
    expect(answer.status).toBe(201);
    expect(await answer.text()).toBe("created");
    // The run is still held at the gate: answered, not recorded.
    expect(await runsOf(server, key, workflow.id)).toEqual([]);
    receiver.open("early-responder");
    const run = await onlyRun(workflow.id);
    expect(run.steps.map((s: any) => s.$return_value)).toEqual([1, "after the gate"]);
  });

  it("answers 200 at once when respond is immediately, and the run still happens", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Immediate",
      trigger: { type: "http" },
      respond: "immediately",
      steps: [step("held", `await fetch(${JSON.stringify(`${receiver.url}/gate/immediate`)}); $.respond({ status: 418, body: "ignored" }); return steps.trigger.event.body.v;`)],
    });
    const answer = await post(workflow.trigger.endpoint_url, { v: "kept" });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ success: true, events: 1 });
    // The step waits at the gate, so the caller was answered before the run ran.
    await waitFor(async () => receiver.gate("immediate").arrived, (arrived) => arrived === 1, "the step at the gate");
    expect(await runsOf(server, key, workflow.id)).toEqual([]);
    receiver.open("immediate");
    const run = await onlyRun(workflow.id);
    expect(run).toMatchObject({ status: "success", steps: [{ $return_value: "kept" }] });
  });

  it("answers 5xx naming the reason when the run ends without responding, or throws first", async () => {
    const silent = await createWorkflow(server, key, {
      name: "Silent",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [step("quiet", `return "no answer";`)],
    });
    const unanswered = await post(silent.trigger.endpoint_url, {});
    expect(unanswered.status).toBeGreaterThanOrEqual(500);
    const unansweredBody = (await unanswered.json()) as any;
    expect(unansweredBody.error.message).toContain('Workflow "Silent" finished without calling $.respond(');

    const failing = await createWorkflow(server, key, {
      name: "Throws before responding",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [step("boom", `throw new Error("the database is down");`), step("reply", `$.respond({ status: 200, body: "never" });`)],
    });
    const failed = await post(failing.trigger.endpoint_url, {});
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const failedBody = (await failed.json()) as any;
    // The anonymous caller learns which step failed and the error id, not the step's message (its owner reads that in the run).
    expect(failedBody.error.message).toContain('failed in step "boom"');
    expect(failedBody.error.message).not.toContain("the database is down");
    const run = await onlyRun(failing.id);
    expect(failedBody.error.details.error_id).toBe(run.id);
    expect(run.status).toBe("error");
    expect(run.steps.map((s: any) => s.status)).toEqual(["error", "skipped"]);

    const exiting = await createWorkflow(server, key, {
      name: "Exits before responding",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [step("leave", `return $.flow.exit("not today");`)],
    });
    const exited = await post(exiting.trigger.endpoint_url, {});
    expect(exited.status).toBeGreaterThanOrEqual(500);
    expect(((await exited.json()) as any).error.message).toContain("$.respond");
  });
});

describe("$.context", () => {
  it("has the run id, the deadline, the workflow, the step and the trigger event", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Context",
      trigger: { type: "http" },
      steps: [step("look", `return { ...$.context, now: Date.now() };`)],
    });
    await post(workflow.trigger.endpoint_url, {});
    const run = await onlyRun(workflow.id);
    const context = run.steps[0].$return_value;
    expect(context.id).toBe(run.id);
    expect(context.workflowId).toBe(workflow.id);
    expect(context.stepId).toBe(workflow.steps[0].id);
    expect(context.event_id).toBe(run.trigger.event_id);
    expect(context.emitter_id).toBe(workflow.trigger.source_id);
    expect(context.run).toEqual({ runs: 1 });
    expect(typeof context.deadline).toBe("number");
    expect(context.deadline).toBeGreaterThan(context.now);
    expect(context.deadline).toBeGreaterThan(run.started_at_ms);
  });
});

describe("$.send.*, carried out after the run", () => {
  it("sends http with method, JSON body, headers, query params and basic auth, once the run is recorded", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Sends http",
      trigger: { type: "http" },
      steps: [
        step(
          "send",
          `$.send.http({
            method: "put",
            url: ${JSON.stringify(`${receiver.url}/hook/path`)},
            params: { page: 2, q: "a b" },
            headers: { "X-Custom": "yes" },
            auth: { username: "ada", password: "s3cret" },
            data: { runId: $.context.id, sentAt: Date.now(), item: steps.trigger.event.body },
          });
          return "queued";`,
        ),
        step("later", `return "the run goes on";`),
      ],
    });
    await post(workflow.trigger.endpoint_url, { name: "widget" });
    const run = await onlyRun(workflow.id);
    const received = await waitFor(async () => receiver.received.filter((r) => r.path === "/hook/path"), (list) => list.length === 1, "the http send");
    const request = received[0]!;
    expect(request.method).toBe("PUT");
    expect(request.query).toEqual({ page: "2", q: "a b" });
    expect(request.headers["x-custom"]).toBe("yes");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from("ada:s3cret").toString("base64")}`);
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({ runId: run.id, item: { name: "widget" } });
    // Not inline: when the request arrived, the run was recorded already, and it was sent after the step ran.
    expect(request.runSeen?.status).toBe(200);
    expect(request.runSeen?.body.data).toMatchObject({ id: run.id, status: "success" });
    expect(body.sentAt).toBeLessThanOrEqual(run.finished_at_ms);
    expect(request.receivedAt).toBeGreaterThanOrEqual(run.finished_at_ms);
    const logs = await waitFor(() => call(server.url, "GET", `/v1/workflows/${workflow.id}/logs`, { key }), (res) => res.body.data.length > 0, "the send's log line");
    expect(logs.body.data[0].text).toContain(`$.send.http of run ${run.id}: PUT ${receiver.url}/hook/path answered 200`);
  });

  it("puts email in the outbox, writes s3 objects, appends emits and streams sse payloads", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Sends the rest",
      trigger: { type: "http" },
      steps: [
        step(
          "send",
          `const order = steps.trigger.event.body;
          $.send.email({ subject: "Order " + order.id, text: "Total " + order.total, html: "<b>" + order.total + "</b>" });
          $.send.s3({ bucket: "orders-bucket", prefix: "daily/", payload: { order, runId: $.context.id } });
          $.send.emit({ raw_event: { kind: "order", id: order.id } });
          $.send.sse({ channel: "orders", payload: { id: order.id, live: true } });`,
        ),
      ],
    });

    // Follow the workflow's stream before the run.
    const abort = new AbortController();
    const streamed: SseMessage[] = [];
    const sse = await fetch(`${server.url}/v1/workflows/${workflow.id}/sse`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
    expect(sse.status).toBe(200);
    expect(sse.headers.get("content-type")).toContain("text/event-stream");
    const reader = sse.body!.getReader();
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const first = await reader.read();
    expect(decoder.decode(first.value)).toContain(": connected");
    const reading = (async () => {
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (chunk.done) return;
        streamed.push(...parser.push(decoder.decode(chunk.value, { stream: true })));
      }
    })();

    try {
      await post(workflow.trigger.endpoint_url, { id: "o-17", total: 99 });
      const run = await onlyRun(workflow.id);
      expect(run.status).toBe("success");

      const outbox = await waitFor(
        () => call(server.url, "GET", "/v1/outbox?limit=100", { key }),
        (res) => res.body.data.some((mail: any) => mail.kind === "send-email" && mail.workflow_id === workflow.id),
        "the mail",
      );
      const mail = outbox.body.data.find((item: any) => item.kind === "send-email" && item.workflow_id === workflow.id);
      expect(mail).toMatchObject({ subject: "Order o-17", text: "Total 99", html: "<b>99</b>", kind: "send-email" });

      const bucket = join(server.dataDir, "objects", userId, "orders-bucket", "daily");
      const files = await waitFor(() => readdir(bucket).catch(() => [] as string[]), (names) => names.some((name) => name.endsWith(".json")), "the s3 object");
      const file = files.find((name) => name.endsWith(".json"))!;
      expect(file).toContain(run.id);
      expect(JSON.parse(await readFile(join(bucket, file), "utf8"))).toEqual({ order: { id: "o-17", total: 99 }, runId: run.id });

      const emitted = await call(server.url, "GET", `/v1/workflows/${workflow.id}/event_summaries?expand=event`, { key });
      expect(emitted.body.page_info.total_count).toBe(1);
      expect(emitted.body.data[0]).toMatchObject({ event: { raw_event: { kind: "order", id: "o-17" } }, metadata: { emitter_id: workflow.id, emit_id: expect.any(String) } });

      const sseMessages = await waitFor(async () => streamed, (list) => list.some((message) => message.event === "orders"), "the sse payload");
      const payload = JSON.parse(sseMessages.find((message) => message.event === "orders")!.data);
      expect(payload).toMatchObject({ id: run.id, channel: "orders", payload: { id: "o-17", live: true } });
      // The emit went out on the same stream, on the default channel.
      const emittedLive = sseMessages.find((message) => message.event === "message");
      expect(emittedLive && JSON.parse(emittedLive.data)).toMatchObject({ event: { raw_event: { kind: "order", id: "o-17" } } });
    } finally {
      abort.abort();
      await reading;
    }
  });

  it("tries a failing destination again with the same idempotency key, logs each attempt, and goes on with the other sends", async () => {
    const refusedPort = await freePort();
    const workflow = await createWorkflow(server, key, {
      name: "Unreachable destination",
      trigger: { type: "http" },
      steps: [
        step(
          "send",
          `$.send.http({ method: "POST", url: "http://127.0.0.1:${refusedPort}/nobody", data: { a: 1 } });
          $.send.http({ method: "POST", url: ${JSON.stringify(`${receiver.url}/fails`)}, data: { b: 2 } });
          $.send.http({ method: "POST", url: ${JSON.stringify(`${receiver.url}/flaky`)}, data: { c: 3 } });
          $.send.http({ method: "POST", url: ${JSON.stringify(`${receiver.url}/after-failures`)}, data: { runId: $.context.id } });
          return "sent";`,
        ),
      ],
    });
    await post(workflow.trigger.endpoint_url, {});
    const run = await onlyRun(workflow.id);
    expect(run.status).toBe("success");
    // Every send settled: the two failing ones given up after their third attempt, the flaky one delivered at its second.
    const settled = await waitFor(
      () => call(server.url, "GET", `/v1/runs/${run.id}`, { key }),
      (res) => res.body.data.steps[0].sends.every((send: any) => send.status !== "pending"),
      "every send settled",
    );
    const sends = settled.body.data.steps[0].sends;
    expect(sends.map((send: any) => [send.target, send.status])).toEqual([
      [`POST http://127.0.0.1:${refusedPort}/nobody`, "failed"],
      [`POST ${receiver.url}/fails`, "failed"],
      [`POST ${receiver.url}/flaky`, "delivered"],
      [`POST ${receiver.url}/after-failures`, "delivered"],
    ]);
    expect(sends[1].detail).toBe(`POST ${receiver.url}/fails answered 500 (given up after 3 attempts)`);
    expect(sends[2].detail).toBe(`POST ${receiver.url}/flaky answered 200`);

    // Each attempt of one send carried that send's key; the keys of two sends differ.
    const keysOf = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => r.headers["idempotency-key"]);
    expect(keysOf("/fails")).toEqual([`${run.id}:0:1`, `${run.id}:0:1`, `${run.id}:0:1`]);
    expect(keysOf("/flaky")).toEqual([`${run.id}:0:2`, `${run.id}:0:2`]);
    expect(keysOf("/after-failures")).toEqual([`${run.id}:0:3`]);

    const logs = await call(server.url, "GET", `/v1/workflows/${workflow.id}/logs?limit=100`, { key });
    const lines = logs.body.data.map((log: any) => [log.stream, log.text]);
    expect(lines).toContainEqual(["stderr", expect.stringMatching(new RegExp(`^\\$\\.send\\.http of run ${run.id} failed: .*\\(attempt 3 of 3; given up, recorded as a DestinationFailed error in \\$errors\\)$`))]);
    expect(lines).toContainEqual(["stderr", `$.send.http of run ${run.id} failed: POST ${receiver.url}/fails answered 500 (attempt 1 of 3; trying again in 50 ms)`]);
    expect(lines).toContainEqual(["stderr", `$.send.http of run ${run.id} failed: POST ${receiver.url}/fails answered 500 (attempt 2 of 3; trying again in 100 ms)`]);
    expect(lines).toContainEqual(["stderr", `$.send.http of run ${run.id} failed: POST ${receiver.url}/fails answered 500 (attempt 3 of 3; given up, recorded as a DestinationFailed error in $errors)`]);
    expect(lines).toContainEqual(["system", `$.send.http of run ${run.id}: POST ${receiver.url}/flaky answered 200`]);
    expect(lines).toContainEqual(["system", `$.send.http of run ${run.id}: POST ${receiver.url}/after-failures answered 200`]);
    // Still a success, even when looked at again.
    expect(settled.body.data.status).toBe("success");
  });

  it("makes a send given up a DestinationFailed error of its workflow in $errors, with the run's trigger event, once", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Gives up",
      trigger: { type: "http" },
      steps: [
        step(
          "send",
          `$.send.http({ method: "POST", url: ${JSON.stringify(`${receiver.url}/fails`)}, data: { d: 4 } });
          $.send.http({ method: "POST", url: "http://169.254.169.254/latest/meta-data/", data: { d: 4 } });
          return "sent";`,
        ),
      ],
    });
    await post(workflow.trigger.endpoint_url, { order: 42 });
    const run = await onlyRun(workflow.id);
    const settled = await waitFor(
      () => call(server.url, "GET", `/v1/runs/${run.id}`, { key }),
      (res) => res.body.data.steps[0].sends.every((send: any) => send.status !== "pending"),
      "both sends given up",
    );
    // An address the network policy refuses is refused every time: given up at the first attempt.
    expect(settled.body.data.steps[0].sends[1]).toMatchObject({ status: "failed", detail: expect.stringMatching(/refused by Runnel's network policy.*\(given up after 1 attempt\)$/) });
    const errors = await call(server.url, "GET", `/v1/workflows/${workflow.id}/$errors/event_summaries?expand=event`, { key });
    // One error per send given up, each once.
    expect(errors.body.data.map((item: any) => item.event.error.code)).toEqual(["DestinationFailed", "DestinationFailed"]);
    const refused = errors.body.data.find((item: any) => item.event.error.msg.includes("169.254.169.254"));
    expect(refused.event.error.msg).toMatch(/^\$\.send\.http to POST http:\/\/169\.254\.169\.254\/latest\/meta-data\/ failed 1 time and was given up: Connection to 169\.254\.169\.254/);
    const { event, metadata } = errors.body.data.find((item: any) => item.event.error.msg.includes("/fails"));
    expect(metadata).toMatchObject({ emitter_id: workflow.id, name: "$errors" });
    expect(event.error).toMatchObject({ code: "DestinationFailed", cellId: run.steps[0].id });
    expect(event.error.msg).toBe(`$.send.http to POST ${receiver.url}/fails failed 3 times and was given up: POST ${receiver.url}/fails answered 500`);
    expect(event.original_event.body).toEqual({ order: 42 });
    expect(event.original_context).toMatchObject({ workflow_id: workflow.id, id: run.trigger.event_id, source_type: "HTTP" });
    const record = await call(server.url, "GET", `/v1/runs/${run.id}`, { key });
    expect(record.body.data.steps[0].sends[0]).toMatchObject({ status: "failed" });
    expect(record.body.data.status).toBe("success");
  });

  it("does not carry out the sends of a failed run", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Fails after sending",
      trigger: { type: "http" },
      steps: [
        step(
          "send",
          `const body = steps.trigger.event.body;
          $.send.http({ method: "POST", url: ${JSON.stringify(`${receiver.url}/from-failing`)}, data: { attempt: body.attempt } });
          $.send.emit({ raw_event: { attempt: body.attempt } });
          $.send.s3({ bucket: "failing-bucket", prefix: "", payload: { attempt: body.attempt } });
          $.send.email({ subject: "attempt " + body.attempt });`,
        ),
        step("maybe_fail", `if (steps.trigger.event.body.fail) throw new Error("failed after sending");`),
      ],
    });
    await post(workflow.trigger.endpoint_url, { attempt: 1, fail: true });
    const [failed] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the failed run");
    expect(failed.status).toBe("error");
    // A second, successful run: once its sends are carried out, the first's would have been too.
    await post(workflow.trigger.endpoint_url, { attempt: 2, fail: false });
    await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 2, "the second run");
    await waitFor(async () => receiver.received.filter((r) => r.path === "/from-failing"), (list) => list.length >= 1, "the second run's send");
    await waitFor(
      () => call(server.url, "GET", "/v1/outbox?limit=100", { key }),
      (res) => res.body.data.some((mail: any) => mail.subject === "attempt 2"),
      "the second run's mail",
    );
    await waitFor(() => readdir(join(server.dataDir, "objects", userId, "failing-bucket")).catch(() => []), (names) => names.length >= 1, "the second run's object");

    expect(receiver.received.filter((r) => r.path === "/from-failing").map((r) => JSON.parse(r.body).attempt)).toEqual([2]);
    const emitted = await call(server.url, "GET", `/v1/workflows/${workflow.id}/event_summaries?expand=event`, { key });
    expect(emitted.body.data.map((event: any) => event.event.raw_event)).toEqual([{ attempt: 2 }]);
    const objects = await readdir(join(server.dataDir, "objects", userId, "failing-bucket"));
    expect(objects).toHaveLength(1);
    expect(JSON.parse(await readFile(join(server.dataDir, "objects", userId, "failing-bucket", objects[0]!), "utf8"))).toEqual({ attempt: 2 });
    const outbox = await call(server.url, "GET", "/v1/outbox?limit=100", { key });
    expect(outbox.body.data.filter((mail: any) => mail.kind === "send-email" && mail.subject.startsWith("attempt ")).map((mail: any) => mail.subject)).toEqual(["attempt 2"]);
    const logs = await call(server.url, "GET", `/v1/workflows/${workflow.id}/logs?limit=100`, { key });
    expect(logs.body.data.some((log: any) => log.text.includes(failed.id))).toBe(false);
  });
});
