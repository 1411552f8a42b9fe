import { createServer, type Server } from "node:http";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { WorkflowRun } from "../../src/domain/workflows.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { startCli, type RunningChild } from "../helpers/child.js";
import { freePort } from "../helpers/ports.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { createWorkflow, waitFor } from "./helpers.js";

/**
 * Crash recovery: runs interrupted by SIGKILL are run after a restart, each
 * trigger event once; a delivery given twice records one run and carries out
 * its sends once.
 */

const LISTENING = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/;

/** Ids of the processes whose command line names `dir` (a server on that data dir and its runners). */
function processesUsing(dir: string): () => Promise<number[]> {
  return async () => {
    const pids: number[] = [];
    for (const entry of await readdir("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
      if (commandLine.includes(dir)) pids.push(Number(entry));
    }
    return pids;
  };
}

/** A gate the steps call: held until the test opens it; counts the calls. */
class Gate {
  private server!: Server;
  private open = false;
  private readonly waiting: Array<() => void> = [];
  arrived = 0;
  url = "";
  readonly posted: Array<{ path: string; body: string }> = [];

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        if (request.url?.startsWith("/gate")) {
          this.arrived++;
          if (this.open) response.end("open");
          else this.waiting.push(() => response.end("open"));
          return;
        }
        this.posted.push({ path: request.url ?? "", body });
        response.end("ok");
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  release(): void {
    this.open = true;
    for (const answer of this.waiting.splice(0)) answer();
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Server processes on one data folder of their own: started, killed with
 * SIGKILL, started again on the same folder, as an admin's would be.
 */
class ServerOnDisk {
  dataDir = "";
  private readonly children: RunningChild[] = [];

  constructor(private readonly prefix: string) {}

  async open(): Promise<void> {
    this.dataDir = await mkdtemp(join(tmpdir(), this.prefix));
  }

  async start(port: number): Promise<{ url: string; child: RunningChild }> {
    const child = startCli(["server"], {
      cwd: this.dataDir,
      env: { RUNNEL_DATA_DIR: this.dataDir, RUNNEL_PORT: String(port), RUNNEL_HOST: "127.0.0.1", RUNNEL_RATE_LIMIT_PER_MINUTE: "0", RUNNEL_LOG_FORMAT: "json", RUNNEL_EGRESS_ALLOW: "127.0.0.1" },
    });
    this.children.push(child);
    const [, url] = await child.waitFor(LISTENING, 30_000);
    return { url: url!, child };
  }

  /** A new user (its id and API key), made with the admin's key the first start wrote. */
  async user(url: string, username: string): Promise<{ id: string; key: string }> {
    const adminKey = (await readFile(join(this.dataDir, "admin-api-key"), "utf8")).trim();
    const user = await call(url, "POST", "/v1/users", { key: adminKey, json: { username } });
    expect(user.status).toBe(201);
    return { id: user.body.data.id as string, key: user.body.data.api_key.key };
  }

  async close(): Promise<void> {
    for (const child of this.children) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill("SIGKILL");
    await rm(this.dataDir, { recursive: true, force: true });
  }
}

describe("a server killed with SIGKILL in the middle of runs", () => {
  const servers = new ServerOnDisk("runnel-crash-");
  let gate: Gate;

  beforeAll(async () => {
    await servers.open();
    gate = new Gate();
    await gate.start();
  });
  afterAll(async () => {
    await servers.close();
    await gate.close();
  });
  const start = (port: number) => servers.start(port);

  // Real server processes started and SIGKILLed: seconds each when the machine is busy (as on CI, two files at once).
  it("finishes the interrupted runs after a restart, one per trigger event, none doubled", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const first = await start(port);
    const { id: userId, key } = await servers.user(first.url, "crash");
    const created = await call(first.url, "POST", "/v1/workflows", {
      key,
      json: {
        name: "Slow",
        trigger: { type: "http" },
        respond: "immediately",
        steps: [
          {
            name: "slow",
            code: `export default defineComponent({
              async run({ steps }) {
                const body = steps.trigger.event.body;
                await new Promise((resolve) => setTimeout(resolve, 50));
                // The later requests wait at the test's gate: still in flight when the server is killed.
                if (body.hold) await fetch(${JSON.stringify(`${gate.url}/gate`)});
                return body.n;
              },
            })`,
          },
          { name: "after", code: "export default defineComponent({ run({ steps }) { return steps.slow.$return_value * 10; } })" },
        ],
      },
    });
    expect(created.status).toBe(200);
    const workflow = created.body.data;
    const runs = async (base: string) => {
      const listed = await call(base, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key });
      expect(listed.status).toBe(200);
      return listed.body as { page_info: { total_count: number }; data: any[] };
    };
    const fire = async (n: number, hold: boolean) => {
      const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n, hold }) });
      // 200 once the event is durable: from here on the run must happen, crash or not.
      expect(answer.status).toBe(200);
    };

    // Five runs go through; fifteen more are accepted and held in flight.
    await Promise.all([1, 2, 3, 4, 5].map((n) => fire(n, false)));
    await waitFor(() => runs(first.url), (page) => page.page_info.total_count === 5, "the first five runs");
    await Promise.all(Array.from({ length: 15 }, (_, i) => fire(6 + i, true)));
    await waitFor(async () => gate.arrived, (arrived) => arrived >= 1, "a run at the gate");
    expect((await runs(first.url)).page_info.total_count).toBe(5);

    const runners = await processesUsing(servers.dataDir)();
    expect(runners.length).toBeGreaterThan(0);
    first.child.child.kill("SIGKILL");
    expect(await first.child.exited).toEqual({ code: null, signal: "SIGKILL" });
    const arrivedBeforeTheCrash = gate.arrived;
    // Its sandbox runners went with it (none is left holding a run).
    await waitFor(processesUsing(servers.dataDir), (pids) => pids.length === 0, "the killed server's runners to end");

    gate.release();
    const second = await start(port);
    const done = await waitFor(() => runs(second.url), (page) => page.page_info.total_count >= 20, "all twenty runs after the restart", 30_000);
    // The interrupted runs ran again in the new process (they reached the gate again).
    expect(gate.arrived).toBeGreaterThan(arrivedBeforeTheCrash);

    // The server works: a new request runs too.
    await fire(21, false);
    const all = await waitFor(() => runs(second.url), (page) => page.page_info.total_count >= 21, "the run after the restart");
    second.child.child.kill("SIGTERM");
    expect((await second.child.exited).code).toBe(0);

    // Stopped: nothing is left to deliver, and each trigger event ran exactly once.
    const store = await openStore({ databaseUrl: null, dataDir: servers.dataDir });
    try {
      expect(await store.claimDeliveries({ now: Date.now() + 86_400_000, leaseMs: 1, limit: 100 })).toEqual([]);
      const recorded = await store.listRuns(userId, workflow.id, { limit: 100 });
      expect(recorded.totalCount).toBe(21);
      const events = await store.listEvents(userId, workflow.trigger.source_id, { page: { limit: 100 } });
      expect(events.totalCount).toBe(21);
      const eventIds = recorded.items.map((run) => run.eventId);
      expect(new Set(eventIds).size).toBe(21);
      expect([...eventIds].sort()).toEqual(events.items.map((event) => event.id).sort());
    } finally {
      await store.close();
    }
    expect(all.data).toHaveLength(21);
    expect(done.page_info.total_count).toBe(20);
    for (const run of all.data) {
      const n = run.trigger.event.body.n;
      expect(run.status).toBe("success");
      expect(run.steps.map((step: any) => step.$return_value)).toEqual([n, n * 10]);
    }
    expect(all.data.map((run: any) => run.trigger.event.body.n).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });
});

describe("a delivery given twice", () => {
  let dataDir: string;
  let store: Store;
  afterEach(async () => {
    await store?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("records one run when two claimers run and finish the same delivery (the first one's lease expired)", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "runnel-twice-"));
    store = await openStore({ databaseUrl: null, dataDir });
    const at = Date.now();
    const owner = await store.createUser({ id: newId("user", at), username: "twice", email: null, isAdmin: false, createdAt: at });
    const workflow = workflowFor(owner.id, "twice", {
      name: "Twice",
      steps: [{ id: newId("cell", at), name: "a", componentId: null, key: "$runnel/error-mail", props: {} }],
    });
    await store.createWorkflow(workflow);
    const emitter = "dc_emitter000000000000000000";
    await store.subscribe({ id: newId("subscription", at), ownerId: owner.id, emitterId: emitter, listenerId: workflow.id, eventName: "", createdAt: at });
    const appended = await store.appendEvents({ ownerId: owner.id, emitterId: emitter, emits: [{ event: { order: 1 } }], dedupe: null, retention: 100, now: at });
    const eventId = appended.events[0]!.id;

    const leaseMs = 1_000;
    const [byFirst] = await store.claimDeliveries({ now: at, leaseMs, limit: 10 });
    expect(byFirst).toMatchObject({ listenerId: workflow.id, emitterId: emitter, eventId, attempts: 1 });
    // While leased, nobody else gets it; once the lease is over, a second claimer does.
    expect(await store.claimDeliveries({ now: at + leaseMs - 1, leaseMs, limit: 10 })).toEqual([]);
    const [bySecond] = await store.claimDeliveries({ now: at + leaseMs, leaseMs, limit: 10 });
    expect(bySecond).toMatchObject({ eventId, attempts: 2 });

    const runOf = (claimer: string): WorkflowRun => ({
      id: newId("run", Date.now()),
      ownerId: owner.id,
      workflowId: workflow.id,
      emitterId: emitter,
      eventId,
      status: "success",
      triggerEvent: { order: 1 },
      steps: [{ id: workflow.steps[0]!.id, name: "a", status: "success", returnValue: claimer, exports: {}, summary: null, logs: [], startedAt: at, durationMs: 1, sends: [] }],
      error: null,
      exitReason: null,
      replayOf: null,
      startedAt: at,
      finishedAt: at + 1,
      durationMs: 1,
    });
    const emitOf = (run: WorkflowRun) => ({ ownerId: owner.id, emitterId: workflow.id, emits: [{ event: { from: run.id } }], dedupe: null, retention: 100, now: Date.now(), runId: run.id });
    const firstRun = runOf("first");
    const secondRun = runOf("second");
    // The second claimer finishes first; the first one, late, finds the run recorded.
    const second = await store.finishRuns({ runs: [secondRun], deliveries: [bySecond!], appends: [emitOf(secondRun)] });
    const first = await store.finishRuns({ runs: [firstRun], deliveries: [byFirst!], appends: [emitOf(firstRun)] });
    const [secondEmits] = second.appended;
    const [firstEmits] = first.appended;
    expect([...second.recorded]).toEqual([secondRun.id]);
    expect(first.recorded.size).toBe(0);
    expect(secondEmits!.events).toHaveLength(1);
    expect(firstEmits!.events).toEqual([]);

    const runs = await store.listRuns(owner.id, workflow.id, { limit: 10 });
    expect(runs.totalCount).toBe(1);
    expect(runs.items[0]).toEqual(secondRun);
    expect(await store.findRun(owner.id, firstRun.id)).toBeNull();
    const emitted = await store.listEvents(owner.id, workflow.id, { page: { limit: 10 } });
    expect(emitted.items.map((event) => event.event)).toEqual([{ from: secondRun.id }]);
    expect(await store.claimDeliveries({ now: at + 86_400_000, leaseMs, limit: 10 })).toEqual([]);
  });
});

describe("a redelivery of an event whose run is recorded", () => {
  let server: TestServer;
  let gate: Gate;
  /** Deliveries of HTTP events (`body` as their JSON) to the workflow, made at `at`, as the store keeps them. */
  const deliveriesOf = async (ownerId: string, workflow: { id: string; trigger: { source_id: string } }, at: number) => {
    const subscriptionId = (await server.server.store.listSubscriptions(ownerId)).find((sub) => sub.listenerId === workflow.id)!.id;
    return (eventId: string, body: unknown) => ({
      listenerId: workflow.id,
      emitterId: workflow.trigger.source_id,
      eventId,
      ownerId,
      subscriptionId,
      channel: "",
      availableAt: at,
      createdAt: at,
      event: { method: "POST", path: "/", query: {}, headers: {}, bodyRaw: JSON.stringify(body), body },
      indexedAtMs: at,
    });
  };
  beforeAll(async () => {
    server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
    gate = new Gate();
    await gate.start();
  });
  afterAll(async () => {
    await gate.close();
    await server.close();
  });

  it("records nothing again and does not carry out the run's sends twice", async () => {
    const { key, id: ownerId } = await createUser(server, "redelivered");
    const workflow = await createWorkflow(server, key, {
      name: "Sends once",
      trigger: { type: "http" },
      steps: [
        {
          name: "send",
          code: `export default defineComponent({ run({ steps, $ }) {
            $.send.http({ method: "POST", url: ${JSON.stringify(`${gate.url}/sent`)}, data: { n: steps.trigger.event.body.n, run: $.context.id } });
            $.send.emit({ raw_event: { n: steps.trigger.event.body.n } });
            return steps.trigger.event.body.n;
          } })`,
        },
      ],
    });
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' });
    const listRuns = async () => (await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key })).body.data as any[];
    // The run as it stays: its send carried out and recorded as delivered (the record is updated after the POST).
    const [run] = await waitFor(listRuns, (runs) => runs.length === 1 && runs[0].steps?.[0]?.sends?.[0]?.status === "delivered", "the first run, its send delivered");
    expect(gate.posted).toHaveLength(1);

    // The same delivery again (as a second claimer would get it), with a fresh event behind it in the same batch.
    const store = server.server.store;
    const at = Date.now();
    const delivery = await deliveriesOf(ownerId, workflow, at);
    await store.enqueueDeliveries([delivery(run.trigger.event_id, { n: 1 }), delivery(`${at}-99`, { n: 2 })]);
    server.server.engine.worker.wake();

    const runs = await waitFor(listRuns, (runs) => runs.length === 2, "the fresh event's run");
    await waitFor(async () => gate.posted.length, (count) => count >= 2, "the fresh run's send");
    expect(runs.map((item) => item.trigger.event.body.n).sort()).toEqual([1, 2]);
    expect(runs.find((item) => item.trigger.event_id === run.trigger.event_id)).toEqual(run);
    expect(gate.posted.map((post) => JSON.parse(post.body).n).sort()).toEqual([1, 2]);
    const emitted = await call(server.url, "GET", `/v1/workflows/${workflow.id}/event_summaries?expand=event`, { key });
    expect(emitted.body.data.map((event: any) => event.event.raw_event.n).sort()).toEqual([1, 2]);
  });
  it("settles a delivery claimed again whose run was recorded ended without running its steps again (its worker died before settling it)", async () => {
    const { key, id: ownerId } = await createUser(server, "recorded-before");
    const workflow = await createWorkflow(server, key, {
      name: "Runs once",
      trigger: { type: "http" },
      steps: [
        {
          name: "count",
          // Each execution of the step tells the gate, as it runs (not a send, which the record would dedupe).
          code: `export default defineComponent({ async run({ steps, $ }) {
            await fetch(${JSON.stringify(`${gate.url}/ran`)}, { method: "POST", body: JSON.stringify({ n: steps.trigger.event.body.n }) });
            $.send.emit({ raw_event: { n: steps.trigger.event.body.n } });
            return steps.trigger.event.body.n;
          } })`,
        },
      ],
    });
    const ran = () => gate.posted.filter((post) => post.path === "/ran").map((post) => JSON.parse(post.body).n as number);
    await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":10}' });
    const listRuns = async () => (await call(server.url, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key })).body.data as any[];
    const [run] = await waitFor(listRuns, (runs) => runs.length === 1, "the first run");
    expect(ran()).toEqual([10]);

    // Its delivery again, as a worker that died after recording the run left it: claimed by it, its lease over. With it in
    // the same batch, a fresh event's delivery left the same way, whose run never ended.
    const store = server.server.store;
    const at = Date.now();
    const delivery = await deliveriesOf(ownerId, workflow, at);
    await store.enqueueDeliveries([delivery(run.trigger.event_id, { n: 10 }), delivery(`${at}-98`, { n: 11 })], { claimer: "a-worker-that-died", until: at - 1 });
    server.server.engine.worker.wake();

    const runs = await waitFor(listRuns, (runs) => runs.length === 2, "the fresh event's run");
    expect(runs.find((item) => item.trigger.event_id === run.trigger.event_id)).toEqual(run);
    // The recorded run's step ran once in all; the other's ran now. Both deliveries are settled: nothing is left to claim.
    expect(ran().sort()).toEqual([10, 11]);
    await waitFor(() => store.claimDeliveries({ now: Date.now() + 86_400_000, leaseMs: 1_000, limit: 10 }), (left) => left.length === 0, "both deliveries settled");
    const emitted = await call(server.url, "GET", `/v1/workflows/${workflow.id}/event_summaries?expand=event`, { key });
    expect(emitted.body.data.map((event: any) => event.event.raw_event.n).sort()).toEqual([10, 11]);
  });
});

/**
 * A receiver that honours the Idempotency-Key header, as the docs ask of
 * one: the first request with a key is acted on (counted), a repeat is
 * answered 200 and ignored. While held, it answers nothing: the server's
 * requests stay in flight.
 */
class IdempotentReceiver {
  private server!: Server;
  private held = true;
  private readonly waiting: Array<() => void> = [];
  /** What was acted on, by key: the body of the first request with it. */
  readonly actedOn = new Map<string, unknown>();
  /** Every request's key, repeats included, in arrival order. */
  readonly keys: string[] = [];
  url = "";

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        const key = String(request.headers["idempotency-key"] ?? "");
        this.keys.push(key);
        if (key && !this.actedOn.has(key)) this.actedOn.set(key, JSON.parse(body));
        if (this.held) this.waiting.push(() => response.end("ok"));
        else response.end("ok");
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  release(): void {
    this.held = false;
    for (const answer of this.waiting.splice(0)) answer();
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe("a server killed with SIGKILL after its runs are recorded, before their sends are carried out", () => {
  const servers = new ServerOnDisk("runnel-sends-crash-");
  let receiver: IdempotentReceiver;

  beforeAll(async () => {
    await servers.open();
    receiver = new IdempotentReceiver();
    await receiver.start();
  });
  afterAll(async () => {
    await servers.close();
    await receiver.close();
  });
  const start = (port: number) => servers.start(port);

  // Real server processes started and SIGKILLed: seconds each when the machine is busy (as on CI, two files at once).
  it("carries out every recorded run's $.send.http after a restart, once per idempotency key: nothing lost, nothing acted on twice", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const first = await start(port);
    const { id: userId, key } = await servers.user(first.url, "sends");
    const created = await call(first.url, "POST", "/v1/workflows", {
      key,
      json: {
        name: "Sends",
        trigger: { type: "http" },
        respond: "immediately",
        steps: [
          {
            name: "send",
            code: `export default defineComponent({ run({ steps, $ }) {
              $.send.http({ method: "POST", url: ${JSON.stringify(`${receiver.url}/orders`)}, data: { n: steps.trigger.event.body.n, run: $.context.id } });
              return steps.trigger.event.body.n;
            } })`,
          },
        ],
      },
    });
    expect(created.status).toBe(200);
    const workflow = created.body.data;
    const runs = async (base: string) => (await call(base, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key })).body as { page_info: { total_count: number }; data: any[] };

    const count = 12;
    for (let n = 1; n <= count; n++) {
      const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      expect(answer.status).toBe(200);
    }
    // Every run recorded, with its send pending: some held in flight at the receiver, the others waiting their turn.
    const recorded = await waitFor(() => runs(first.url), (page) => page.page_info.total_count === count, "every run recorded");
    await waitFor(async () => receiver.keys.length, (arrived) => arrived >= 1, "a send in flight");
    for (const run of recorded.data) expect(run.steps[0].sends[0].status).toBe("pending");

    first.child.child.kill("SIGKILL");
    expect(await first.child.exited).toEqual({ code: null, signal: "SIGKILL" });
    await waitFor(processesUsing(servers.dataDir), (pids) => pids.length === 0, "the killed server's runners to end");
    // What reached the receiver before the kill; none of it was answered.
    const inFlight = new Set(receiver.keys);
    expect(inFlight.size).toBeGreaterThan(0);

    receiver.release();
    const second = await start(port);
    const delivered = await waitFor(
      () => runs(second.url),
      (page) => page.data.length === count && page.data.every((run) => run.steps[0].sends[0].status === "delivered"),
      "every run's send delivered after the restart",
      30_000,
    );
    second.child.child.kill("SIGTERM");
    expect((await second.child.exited).code).toBe(0);

    // Each recorded run's send was acted on exactly once, under its own key, with its own data.
    const expectedKeys = delivered.data.map((run) => `${run.id}:0:0`).sort();
    expect([...receiver.actedOn.keys()].sort()).toEqual(expectedKeys);
    for (const run of delivered.data) expect(receiver.actedOn.get(`${run.id}:0:0`)).toEqual({ n: run.trigger.event.body.n, run: run.id });
    expect(delivered.data.map((run) => run.trigger.event.body.n).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    // The sends the kill caught in flight were sent again, with the same keys: the receiver saw them twice and acted once.
    for (const sent of inFlight) expect(receiver.keys.filter((seen) => seen === sent).length).toBe(2);
    expect(receiver.keys.length).toBe(count + inFlight.size);

    // Nothing is left in the outbox.
    const store = await openStore({ databaseUrl: null, dataDir: servers.dataDir });
    try {
      expect(await store.claimSends({ now: Date.now() + 86_400_000, leaseMs: 1, limit: 100 })).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

/**
 * A workflow that answers its caller itself: its trigger event's delivery is
 * not written when the run is expected to answer at its end (EventBatch.held),
 * so the answer must wait for something durable. An answer at the run's end
 * comes once the run is recorded; an answer given before the run ends comes
 * once its delivery is, and that run is finished after a crash.
 */
describe("a server killed while workflows that answer their callers run", () => {
  const servers = new ServerOnDisk("runnel-crash-respond-");
  const gate = new Gate();

  beforeAll(async () => {
    await servers.open();
    await gate.start();
  });
  afterAll(async () => {
    await servers.close();
    await gate.close();
  });

  it("answers at the run's end only once the run is recorded, and finishes after a restart every run that answered early", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const first = await servers.start(port);
    const { key } = await servers.user(first.url, "respond");
    const created = await call(first.url, "POST", "/v1/workflows", {
      key,
      json: {
        name: "Answers",
        trigger: { type: "http" },
        respond: "workflow",
        steps: [
          {
            name: "answer",
            code: `export default defineComponent({
              async run({ steps, $ }) {
                const body = steps.trigger.event.body;
                await $.respond({ status: 200, body: { n: body.n } });
                // Held runs go on working after their answer, at the test's gate.
                if (body.hold) await fetch(${JSON.stringify(`${gate.url}/gate`)});
                return body.n;
              },
            })`,
          },
        ],
      },
    });
    expect(created.status).toBe(200);
    const workflow = created.body.data;
    const runs = async (base: string) => {
      const listed = await call(base, "GET", `/v1/workflows/${workflow.id}/runs?limit=100`, { key });
      expect(listed.status).toBe(200);
      return listed.body as { page_info: { total_count: number }; data: any[] };
    };
    const fire = async (n: number, hold: boolean) => {
      const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n, hold }) });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ n });
    };

    // The first run loads the steps into a runner, and its ending may come a turn after its answer.
    await fire(1, false);
    await waitFor(() => runs(first.url), (page) => page.page_info.total_count === 1, "the first run");
    // Answered at the run's end: by the time the caller has the answer, the run is recorded.
    for (let n = 2; n <= 5; n++) {
      await fire(n, false);
      expect((await runs(first.url)).page_info.total_count).toBe(n);
    }
    // Answered early, while the runs wait at the gate: acknowledged, so they must happen, crash or not.
    // (Three: each batch of runs takes one of the worker's four slots while it waits.)
    await Promise.all([6, 7, 8].map((n) => fire(n, true)));
    await waitFor(async () => gate.arrived, (arrived) => arrived >= 3, "the three held runs at the gate");
    expect((await runs(first.url)).page_info.total_count).toBe(5);

    first.child.child.kill("SIGKILL");
    expect(await first.child.exited).toEqual({ code: null, signal: "SIGKILL" });
    await waitFor(processesUsing(servers.dataDir), (pids) => pids.length === 0, "the killed server's runners to end");

    gate.release();
    const second = await servers.start(port);
    const done = await waitFor(() => runs(second.url), (page) => page.page_info.total_count >= 8, "all eight runs after the restart", 30_000);
    const values = done.data.map((run: any) => run.steps?.[0]?.return_value ?? run.steps?.[0]?.$return_value).sort((a: number, b: number) => a - b);
    expect(values).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    second.child.child.kill("SIGTERM");
    expect((await second.child.exited).code).toBe(0);
  });
});
