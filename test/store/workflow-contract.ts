import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError } from "../../src/domain/errors.js";
import { newId } from "../../src/domain/ids.js";
import type { Workflow, WorkflowRun } from "../../src/domain/workflows.js";
import type { EventBatch, Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";


function runFor(workflow: Workflow, emitterId: string, eventId: string): WorkflowRun {
  const at = Date.now();
  return {
    id: newId("run", at),
    ownerId: workflow.ownerId,
    workflowId: workflow.id,
    emitterId,
    eventId,
    status: "success",
    triggerEvent: { n: eventId },
    steps: [{ id: "c_1", name: "a", status: "success", returnValue: 1, exports: { e: 2 }, summary: "did", logs: [{ stream: "stdout", text: "hi", ts: at }], startedAt: at, durationMs: 1,
      sends: [
        { destination: "http", target: "POST https://example.test/hook", summary: "data {}", status: "pending", detail: null },
        { destination: "emit", target: `${workflow.id} (default channel)`, summary: "raw_event {}", status: "delivered", detail: null },
      ],
    }],
    error: null,
    exitReason: null,
    replayOf: null,
    startedAt: at,
    finishedAt: at,
    durationMs: 0,
  };
}

function emitBatch(ownerId: string, emitterId: string, events: unknown[], overrides: Partial<EventBatch> = {}): EventBatch {
  return { ownerId, emitterId, emits: events.map((event) => ({ event })), dedupe: null, retention: 100, now: Date.now(), ...overrides };
}

/** The workflows half of the Store contract: workflows, the durable delivery queue, runs. */
export function describeWorkflowContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, workflows and deliveries: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    let otherId: string;
    let listener: Workflow;
    const emitter = "p_emitter0000000000000000000";

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
      ownerId = (await store.createUser(newUserInput())).id;
      otherId = (await store.createUser(newUserInput())).id;
      listener = await store.createWorkflow(workflowFor(ownerId, "listener"));
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: emitter, listenerId: listener.id, eventName: "", createdAt: Date.now() });
    });
    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    it("creates, finds, lists, updates and deletes workflows for their owner only", async () => {
      expect(await store.findWorkflow(ownerId, listener.id)).toEqual(listener);
      expect(await store.findWorkflow(ownerId, "listener")).toEqual(listener);
      expect(await store.findWorkflow(otherId, listener.id)).toBeNull();
      await expect(store.createWorkflow(workflowFor(ownerId, "listener"))).rejects.toBeInstanceOf(ConflictError);
      const errorWorkflow = await store.createWorkflow(workflowFor(ownerId, "errors", { isErrorWorkflow: true }));
      expect((await store.findErrorWorkflow(ownerId))?.id).toBe(errorWorkflow.id);
      expect(await store.findErrorWorkflow(otherId)).toBeNull();
      const page = await store.listWorkflows(ownerId, { limit: 1 });
      expect(page).toMatchObject({ totalCount: 2, items: [{ id: errorWorkflow.id }] });
      expect([...(await store.takenWorkflowSlugs(ownerId, "listener"))]).toEqual(["listener"]);
      await store.updateWorkflow({ ...listener, name: "renamed", triggerSourceId: "dc_x", active: false });
      expect(await store.findWorkflow(ownerId, listener.id)).toMatchObject({ name: "renamed", triggerSourceId: "dc_x", active: false });
      expect((await store.workflowsTriggeredBy(ownerId, "dc_x")).map((w) => w.id)).toEqual([listener.id]);
      expect(await store.deleteWorkflow(otherId, listener.id)).toBe(false);
      expect(await store.deleteWorkflow(ownerId, listener.id)).toBe(true);
      expect(await store.findWorkflow(ownerId, listener.id)).toBeNull();
      expect((await store.listSubscriptions(ownerId)).filter((s) => s.listenerId === listener.id)).toEqual([]);
    });

    it("records a delivery with its event, leases it to one claimer, and gives it again when the lease expires", async () => {
      const appended = await store.appendEvents(emitBatch(ownerId, emitter, [{ a: 1 }]));
      expect(appended.deliveries).toBe(1);
      expect((await store.appendEvents(emitBatch(ownerId, "p_nobodylistens000000000000000", [{ a: 1 }]))).deliveries).toBe(0);
      const eventId = appended.events[0]!.id;
      const now = Date.now();
      const claimed = await store.claimDeliveries({ now, leaseMs: 60_000, limit: 10 });
      expect(claimed).toMatchObject([{ listenerId: listener.id, emitterId: emitter, eventId, event: { a: 1 }, attempts: 1, interruptions: 0, status: "running" }]);
      expect(await store.claimDeliveries({ now, leaseMs: 60_000, limit: 10 })).toEqual([]);
      // Claimed again after its lease ran out: its first claimer died mid-run.
      const again = await store.claimDeliveries({ now: now + 60_001, leaseMs: 60_000, limit: 10 });
      expect(again).toMatchObject([{ eventId, attempts: 2, interruptions: 1 }]);
      // Found running at a start: interrupted again.
      expect(await store.requeueDeliveries(now)).toBe(1);
      expect(await store.claimDeliveries({ now, leaseMs: 1, limit: 10 })).toMatchObject([{ eventId, attempts: 3, interruptions: 2 }]);
    });

    it("takes back at a start only the leases of the instance that starts again, when asked to", async () => {
      await store.appendEvents(emitBatch(ownerId, emitter, [{ a: 1 }, { a: 2 }]));
      const now = Date.now();
      const [mine] = await store.claimDeliveries({ now, leaseMs: 60_000, limit: 1, claimer: "instance-a" });
      const [theirs] = await store.claimDeliveries({ now, leaseMs: 60_000, limit: 1, claimer: "instance-b" });
      expect(mine).toBeDefined();
      expect(theirs).toBeDefined();
      expect(await store.requeueDeliveries(now, "instance-a")).toBe(1);
      const again = await store.claimDeliveries({ now, leaseMs: 60_000, limit: 10, claimer: "instance-a" });
      expect(again.map((delivery) => delivery.eventId)).toEqual([mine!.eventId]);
      expect(again[0]!.interruptions).toBe(1);
    });

    it("renews the leases of one claimer's running deliveries in one call, and no one else's", async () => {
      await store.appendEvents(emitBatch(ownerId, emitter, [{ a: 1 }, { a: 2 }, { a: 3 }]));
      const now = Date.now();
      const [mine] = await store.claimDeliveries({ now, leaseMs: 1_000, limit: 1, claimer: "instance-a" });
      const [theirs] = await store.claimDeliveries({ now, leaseMs: 1_000, limit: 1, claimer: "instance-b" });
      expect(await store.renewDeliveryLeases("instance-a", now + 60_000)).toBe(1);
      expect(await store.renewDeliveryLeases("instance-z", now + 60_000)).toBe(0);
      expect(await store.renewDeliveryLeases(null, now + 60_000)).toBe(0);
      // Past the first lease: b's claim ran out and is taken, with the one never claimed; a's was renewed.
      const later = await store.claimDeliveries({ now: now + 1_001, leaseMs: 60_000, limit: 10, claimer: "instance-c" });
      expect(later.map((delivery) => delivery.eventId)).toContain(theirs!.eventId);
      expect(later.map((delivery) => delivery.eventId)).not.toContain(mine!.eventId);
      expect(later).toHaveLength(2);
      // Settled (here: removed as a run's record does), a claim has nothing left to renew.
      await store.dropDeliveries([mine!]);
      expect(await store.renewDeliveryLeases("instance-a", now + 60_000)).toBe(0);
    });

    it("does not count a delivery given back by its claimer (a failure it survived) as interrupted", async () => {
      await store.appendEvents(emitBatch(ownerId, emitter, [{ a: 1 }]));
      const now = Date.now();
      const claimed = await store.claimDeliveries({ now, leaseMs: 60_000, limit: 10 });
      await store.releaseDeliveries(claimed, now);
      expect(await store.claimDeliveries({ now, leaseMs: 60_000, limit: 10 })).toMatchObject([{ attempts: 2, interruptions: 0 }]);
    });

    it("keeps the event with its delivery when retention trims it from the log", async () => {
      await store.appendEvents(emitBatch(ownerId, emitter, [{ n: 1 }, { n: 2 }, { n: 3 }], { retention: 1 }));
      const claimed = await store.claimDeliveries({ now: Date.now(), leaseMs: 60_000, limit: 10 });
      expect(claimed.map((delivery) => delivery.event)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    });

    it("records a run once per (workflow, emitter, event), removes its delivery, and appends its events only the first time", async () => {
      const appended = await store.appendEvents(emitBatch(ownerId, emitter, [{ a: 1 }]));
      const eventId = appended.events[0]!.id;
      const [delivery] = await store.claimDeliveries({ now: Date.now(), leaseMs: 60_000, limit: 10 });
      const run = runFor(listener, emitter, eventId);
      const errors = (runId: string): EventBatch => ({ ...emitBatch(ownerId, listener.id, [{ failed: true }]), emits: [{ event: { failed: true }, name: "$errors", id: runId }], runId });
      const first = await store.finishRuns({ runs: [run], deliveries: [delivery!], appends: [errors(run.id)] });
      expect(first.appended[0]!.events).toHaveLength(1);
      expect([...first.recorded]).toEqual([run.id]);
      // A redelivery after a crash runs again, but records nothing twice.
      const rerun = { ...run, id: newId("run") };
      const second = await store.finishRuns({ runs: [rerun], deliveries: [delivery!], appends: [errors(rerun.id)] });
      expect(second.appended[0]!.events).toEqual([]);
      expect(second.recorded.size).toBe(0);
      const runs = await store.listRuns(ownerId, listener.id, { limit: 10 });
      expect(runs.totalCount).toBe(1);
      expect(runs.items[0]).toEqual(run);
      expect(await store.findRun(ownerId, run.id)).toEqual(run);
      expect(await store.findRun(otherId, run.id)).toBeNull();
      expect(await store.claimDeliveries({ now: Date.now() + 120_000, leaseMs: 1, limit: 10 })).toEqual([]);
      const listed = await store.listEvents(ownerId, listener.id, { channel: "$errors", page: { limit: 10 } });
      expect(listed.items.map((event) => event.emitId)).toEqual([run.id]);
      expect(await store.findEvent(ownerId, listener.id, listed.items[0]!.id)).toMatchObject({ channel: "$errors", event: { failed: true } });
      expect(await store.findEvent(otherId, listener.id, listed.items[0]!.id)).toBeNull();
    });

    it("keeps a run waiting to retry as its row, replaced only by a later attempt, and finds it by run key", async () => {
      const appended = await store.appendEvents(emitBatch(ownerId, emitter, [{ a: 1 }]));
      const eventId = appended.events[0]!.id;
      const [delivery] = await store.claimDeliveries({ now: Date.now(), leaseMs: 60_000, limit: 10 });
      const base = runFor(listener, emitter, eventId);
      const failed = { code: "UserError" as const, msg: "try", name: "Error", cellId: "c_1", ts: new Date().toISOString(), stack: "Error: try" };
      const attempt1 = { ...base, status: "retrying" as const, error: failed, attempt: 1, nextAttemptAt: 123, continuation: { sends: [{ type: "http", payload: { url: "u" } }], sendPlaces: [{ step: 0, send: 0 }], tries: { c_1: 1 } } };
      attempt1.attempts = [{ attempt: 1, stepId: "c_1", stepName: "a", code: "UserError", msg: "try", failedAt: 1, willRetry: true, nextAttemptAt: 123 }];
      const first = await store.finishRuns({ runs: [attempt1], deliveries: [], appends: [] });
      expect([...first.recorded]).toEqual([base.id]);
      // Read back without what is the default (attempt 1).
      const { attempt: _first, ...stored1 } = attempt1;
      expect(await store.findRunsByKey(ownerId, listener.id, [{ emitterId: emitter, eventId }, { emitterId: emitter, eventId: "0-0" }])).toEqual([stored1]);
      expect(await store.findRunsByKey(otherId, listener.id, [{ emitterId: emitter, eventId }])).toEqual([]);
      // A second claimer's record of the same attempt changes nothing.
      expect((await store.finishRuns({ runs: [{ ...attempt1, nextAttemptAt: 999 }], deliveries: [], appends: [] })).recorded.size).toBe(0);
      expect((await store.findRun(ownerId, base.id))?.nextAttemptAt).toBe(123);
      // The next attempt ends it: the row is replaced, its continuation gone, and the delivery removed.
      const done = { ...base, attempt: 2, attempts: attempt1.attempts };
      const second = await store.finishRuns({ runs: [{ ...done, nextAttemptAt: null, continuation: null }], deliveries: [delivery!], appends: [] });
      expect([...second.recorded]).toEqual([base.id]);
      expect(await store.findRun(ownerId, base.id)).toEqual(done);
      // Ended, it is still found by its key: a delivery claimed again finds its run happened.
      expect(await store.findRunsByKey(ownerId, listener.id, [{ emitterId: emitter, eventId }])).toEqual([done]);
      // An ended run is never replaced, whatever attempt says so.
      expect((await store.finishRuns({ runs: [{ ...done, status: "error", attempt: 3 }], deliveries: [], appends: [] })).recorded.size).toBe(0);
      expect((await store.findRun(ownerId, base.id))?.status).toBe("success");
    });

    it("keeps a delayed run as its row like a retrying one; a cancel rewrites it while it is still that attempt, and a cancelled row is never replaced", async () => {
      const appended = await store.appendEvents(emitBatch(ownerId, emitter, [{ d: 1 }, { d: 2 }]));
      const [eventId, secondEventId] = appended.events.map((event) => event.id) as [string, string];
      const flow = { resumeAt: 1, token: "t".repeat(32), rerun: { runs: 1, context: { job: 1 }, maxReruns: 3 } };
      const delayed = { ...runFor(listener, emitter, eventId), status: "delayed" as const, nextAttemptAt: 456, continuation: { sends: [], sendPlaces: [], tries: {}, flow } };
      expect([...(await store.finishRuns({ runs: [delayed], deliveries: [], appends: [] })).recorded]).toEqual([delayed.id]);
      expect(await store.findRunsByKey(ownerId, listener.id, [{ emitterId: emitter, eventId }])).toEqual([delayed]);
      // A resumed execution (attempt 2) replaces it, and may be delayed again.
      const again = { ...delayed, attempt: 2, nextAttemptAt: 789 };
      expect((await store.finishRuns({ runs: [again], deliveries: [], appends: [] })).recorded.size).toBe(1);
      expect(await store.findRun(ownerId, delayed.id)).toEqual(again);
      // A cancel fenced by a stale attempt changes nothing; by the current one, it cancels.
      const cancel = { status: "cancelled" as const, continuation: null, nextAttemptAt: null, finishedAt: 1_000, cancelledBy: "u_someone" };
      expect(await store.updateWaitingRun(ownerId, delayed.id, 1, cancel)).toBe(false);
      expect(await store.updateWaitingRun(otherId, delayed.id, 2, cancel)).toBe(false);
      expect(await store.updateWaitingRun(ownerId, delayed.id, 2, cancel)).toBe(true);
      const { nextAttemptAt: _next, continuation: _continuation, ...rest } = again;
      expect(await store.findRun(ownerId, delayed.id)).toEqual({ ...rest, status: "cancelled", finishedAt: 1_000, cancelledBy: "u_someone" });
      // Found by run key (its delivery, claimed again, is settled without running), and never replaced or cancelled twice.
      expect((await store.findRunsByKey(ownerId, listener.id, [{ emitterId: emitter, eventId }]))[0]?.status).toBe("cancelled");
      expect((await store.finishRuns({ runs: [{ ...again, status: "success", attempt: 3, nextAttemptAt: null, continuation: null }], deliveries: [], appends: [] })).recorded.size).toBe(0);
      expect(await store.updateWaitingRun(ownerId, delayed.id, 2, cancel)).toBe(false);
      expect((await store.findRun(ownerId, delayed.id))?.status).toBe("cancelled");
      // A resume URL's request is written into a waiting run's continuation.
      const other = { ...runFor(listener, emitter, secondEventId), status: "delayed" as const, nextAttemptAt: 456, continuation: { sends: [], sendPlaces: [], tries: {}, flow: { resumeAt: 1, token: "x".repeat(32) } } };
      await store.finishRuns({ runs: [other], deliveries: [], appends: [] });
      const callbackRequest = { method: "POST", headers: { a: "b" }, body: { ok: true } };
      expect(await store.updateWaitingRun(ownerId, other.id, 1, { continuation: { ...other.continuation, flow: { ...other.continuation.flow, callbackRequest } }, nextAttemptAt: 500 })).toBe(true);
      expect((await store.findRun(ownerId, other.id))?.continuation?.flow?.callbackRequest).toEqual(callbackRequest);
    });

    it("keeps a version of a workflow's steps at each save, lists them newest first, and lets old ones go unless a run ran them", async () => {
      const stepsOf = (n: number) => [{ id: "c_1", name: "a", componentId: `sc_${n}`, key: null, props: { n } }];
      const created = await store.createWorkflow(workflowFor(ownerId, "versioned", { steps: stepsOf(1) }));
      expect(await store.findWorkflowVersion(ownerId, created.id, 1)).toMatchObject({ workflowId: created.id, version: 1, deploymentId: created.deploymentId, steps: stepsOf(1) });
      expect(await store.findWorkflowVersion(otherId, created.id, 1)).toBeNull();
      // A run of version 2, which must outlive the versions let go.
      const appended = await store.appendEvents(emitBatch(ownerId, emitter, [{ a: 1 }]));
      const ran = { ...runFor(created, emitter, appended.events[0]!.id), workflowVersion: 2 };
      await store.finishRuns({ runs: [ran], deliveries: [], appends: [] });
      expect((await store.findRun(ownerId, ran.id))?.workflowVersion).toBe(2);
      let saved = created;
      for (let version = 2; version <= 25; version++) {
        saved = { ...saved, steps: stepsOf(version), deploymentId: `d_${version}`, version, updatedAt: created.updatedAt + version };
        await store.updateWorkflow(saved);
      }
      expect((await store.findWorkflow(ownerId, created.id))?.version).toBe(25);
      const listed = await store.listWorkflowVersions(ownerId, created.id, { limit: 100 });
      // The last 20 (6…25), and 2 which a listed run ran; 1, 3, 4 and 5 are gone.
      expect(listed.map((version) => version.version)).toEqual([25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 2]);
      expect(listed[0]).toMatchObject({ deploymentId: "d_25", steps: stepsOf(25), savedAt: created.updatedAt + 25 });
      expect((await store.listWorkflowVersions(ownerId, created.id, { limit: 2, before: 7 })).map((version) => version.version)).toEqual([6, 2]);
      expect(await store.findWorkflowVersion(ownerId, created.id, 3)).toBeNull();
      // Saved again under the same number (secrets sealed at rest): the steps are replaced, nothing else moves.
      await store.updateWorkflow({ ...saved, steps: stepsOf(99) });
      expect((await store.findWorkflowVersion(ownerId, created.id, 25))?.steps).toEqual(stepsOf(99));
      expect(await store.listWorkflowVersions(otherId, created.id, { limit: 100 })).toEqual([]);
      await store.deleteWorkflow(ownerId, created.id);
      expect(await store.listWorkflowVersions(ownerId, created.id, { limit: 100 })).toEqual([]);
    });

    it("routes deliveries: never to the emitter itself, glob ones left out for 'explicit', none for 'none'", async () => {
      const errorWorkflow = await store.createWorkflow(workflowFor(ownerId, "errors", { isErrorWorkflow: true }));
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: "p_*", listenerId: errorWorkflow.id, eventName: "$errors", createdAt: Date.now() });
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: errorWorkflow.id, listenerId: listener.id, eventName: "$errors", createdAt: Date.now() });
      const emit = (emitterId: string, deliverTo?: EventBatch["deliverTo"]) =>
        store.appendEvents({ ...emitBatch(ownerId, emitterId, []), emits: [{ event: {}, name: "$errors" }], deliverTo });
      const listenersOf = async () => {
        const claimed = await store.claimDeliveries({ now: Date.now() + 1_000_000, leaseMs: 1, limit: 100 });
        await store.dropDeliveries(claimed);
        return claimed.map((d) => `${d.emitterId}>${d.listenerId}`).sort();
      };
      await emit(errorWorkflow.id);
      expect(await listenersOf()).toEqual([`${errorWorkflow.id}>${listener.id}`]);
      await emit(emitter, "explicit");
      expect(await listenersOf()).toEqual([]);
      await emit(emitter, "all");
      expect(await listenersOf()).toEqual([`${emitter}>${errorWorkflow.id}`]);
      await emit(errorWorkflow.id, "none");
      expect(await listenersOf()).toEqual([]);
    });

    it("a source hears itself by id, never through dc_*; the append that carries out a delivery removes it in its transaction", async () => {
      const self = "dc_self000000000000000000000";
      const globbed = "dc_glob000000000000000000000";
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: self, listenerId: self, eventName: "", createdAt: Date.now() });
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: "dc_*", listenerId: globbed, eventName: "", createdAt: Date.now() });
      await store.appendEvents(emitBatch(ownerId, self, [{ n: 1 }]));
      await store.appendEvents(emitBatch(ownerId, globbed, [{ n: 2 }]));
      const claimed = await store.claimDeliveries({ now: Date.now() + 1_000, leaseMs: 60_000, limit: 10 });
      expect(claimed.map((d) => `${d.emitterId}>${d.listenerId}`).sort()).toEqual([`${self}>${globbed}`, `${self}>${self}`].sort());
      const own = claimed.find((d) => d.listenerId === self)!;
      // The source's run of it commits: its event, and the delivery gone, together.
      const ran = await store.appendEvents(emitBatch(ownerId, self, [], { completes: [own] }));
      expect(ran.events).toEqual([]);
      const rest = claimed.filter((d) => d !== own);
      await store.dropDeliveries(rest);
      expect(await store.claimDeliveries({ now: Date.now() + 1_000_000, leaseMs: 1, limit: 10 })).toEqual([]);
    });

    it("appends log lines as $logs events, with deliveries, only when a listener wants them", async () => {
      const source = "dc_logs000000000000000000000";
      const lines = [{ stream: "stdout" as const, text: "one", ts: Date.now() }];
      const quiet = await store.appendEvents(emitBatch(ownerId, source, [{ n: 1 }], { logs: lines, logEvents: lines }));
      expect(quiet.logEvents).toBeUndefined();
      expect((await store.listEvents(ownerId, source, { channel: "$logs", page: { limit: 10 } })).items).toEqual([]);

      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: source, listenerId: listener.id, eventName: "$logs", createdAt: Date.now() });
      const heard = await store.appendEvents(emitBatch(ownerId, source, [{ n: 2 }], { logs: lines, logEvents: lines }));
      expect(heard.events.map((event) => event.channel)).toEqual([""]);
      expect(heard.logEvents).toMatchObject([{ channel: "$logs", event: { stream: "stdout", msg: "one" } }]);
      // Ids from the events' sequence: after the emitted event's, never the same.
      expect(heard.logEvents![0]!.id).not.toBe(heard.events[0]!.id);
      const claimed = await store.claimDeliveries({ now: Date.now() + 1_000, leaseMs: 60_000, limit: 10 });
      expect(claimed).toMatchObject([{ listenerId: listener.id, emitterId: source, channel: "$logs", eventId: heard.logEvents![0]!.id, event: { msg: "one" } }]);
      // Log lines alone (a workflow's steps'), no emits: still delivered.
      const alone = await store.appendEvents(emitBatch(ownerId, source, [], { logEvents: lines }));
      expect(alone.logEvents).toHaveLength(1);
    });

    it("records webhook attempts: retrying leaves the delivery due later, delivered removes it; the record keeps its id", async () => {
      const webhookId = newId("webhook");
      await store.createWebhook({ id: webhookId, ownerId, name: null, description: null, url: "https://example.com/x", secret: "enc:v1:x", active: true, createdAt: Date.now(), updatedAt: Date.now() });
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: emitter, listenerId: webhookId, eventName: "", createdAt: Date.now() });
      const [appended] = (await store.appendEvents(emitBatch(ownerId, emitter, [{ n: 1 }]))).events;
      const at = Date.now() + 1_000;
      const first = (await store.claimDeliveries({ now: at, leaseMs: 60_000, limit: 10 })).find((d) => d.listenerId === webhookId)!;
      const record = { id: newId("webhookDelivery"), ownerId, webhookId, emitterId: emitter, eventId: appended!.id, channel: "", attempts: 1, lastStatus: 500, lastError: "HTTP 500", createdAt: first.createdAt, updatedAt: at, deliveredAt: null };
      await store.recordWebhookAttempt({ ...record, status: "retrying" }, at + 5_000);
      expect((await store.claimDeliveries({ now: at + 4_999, leaseMs: 60_000, limit: 10 })).filter((d) => d.listenerId === webhookId)).toEqual([]);
      const again = (await store.claimDeliveries({ now: at + 5_000, leaseMs: 60_000, limit: 10 })).filter((d) => d.listenerId === webhookId);
      expect(again).toMatchObject([{ attempts: 2 }]);
      await store.recordWebhookAttempt({ ...record, id: newId("webhookDelivery"), status: "delivered", attempts: 2, lastStatus: 200, lastError: null, deliveredAt: at }, null);
      expect((await store.claimDeliveries({ now: at + 1_000_000, leaseMs: 1, limit: 10 })).filter((d) => d.listenerId === webhookId)).toEqual([]);
      const listed = await store.listWebhookDeliveries(ownerId, webhookId, { limit: 10 });
      expect(listed.items).toEqual([{ ...record, status: "delivered", attempts: 2, lastStatus: 200, lastError: null, deliveredAt: at }]);
      expect((await store.listWebhookDeliveries(otherId, webhookId, { limit: 10 })).items).toEqual([]);
      expect(await store.deleteWebhook(otherId, webhookId)).toBe(false);
      expect(await store.deleteWebhook(ownerId, webhookId)).toBe(true);
      expect((await store.listSubscriptions(ownerId)).some((subscription) => subscription.listenerId === webhookId)).toBe(false);
    });

    it("re-seals webhooks' signing secrets with the other sealed values, and finds one as the sample of the key in force", async () => {
      const sealed = (tag: string) => `enc:v1:${tag}`;
      const isSealed = (value: string) => value.startsWith("enc:v1:");
      // Only a webhook holds a sealed value: a data folder like that must still tell which key opens it.
      expect(await store.anySealedValue(isSealed)).toBeNull();
      const webhook = { ownerId, name: null, description: null, url: "https://example.com/x", active: true, createdAt: Date.now(), updatedAt: Date.now() };
      const mine = await store.createWebhook({ ...webhook, id: newId("webhook"), secret: sealed("mine") });
      const theirs = await store.createWebhook({ ...webhook, id: newId("webhook"), ownerId: otherId, secret: sealed("theirs") });
      expect(await store.anySealedValue(isSealed)).toMatch(/^enc:v1:(mine|theirs)$/);

      const counts = await store.resealSecrets((value) => (isSealed(value) ? `${value}-next` : null));
      expect(counts).toEqual({ sources: 0, workflows: 0, webhooks: 2, envVars: 0, appAccounts: 0, oauthClients: 0, values: 2 });
      expect((await store.findWebhook(ownerId, mine.id))?.secret).toBe("enc:v1:mine-next");
      expect((await store.findWebhook(otherId, theirs.id))?.secret).toBe("enc:v1:theirs-next");
      // A value the callback leaves alone (not sealed) is not counted or written.
      expect(await store.resealSecrets(() => null)).toEqual({ sources: 0, workflows: 0, webhooks: 0, envVars: 0, appAccounts: 0, oauthClients: 0, values: 0 });
      expect((await store.findWebhook(ownerId, mine.id))?.secret).toBe("enc:v1:mine-next");
    });

    it("enqueues, releases and drops deliveries", async () => {
      const at = Date.now();
      await store.enqueueDeliveries([
        { listenerId: listener.id, emitterId: listener.id, eventId: `${at}-7`, ownerId, subscriptionId: "replay", channel: "$replay", availableAt: at, createdAt: at, event: { original_event: 1 }, indexedAtMs: at },
      ]);
      const [claimed] = await store.claimDeliveries({ now: at, leaseMs: 60_000, limit: 10 });
      expect(claimed).toMatchObject({ channel: "$replay", event: { original_event: 1 } });
      await store.releaseDeliveries([claimed!], at + 5_000);
      expect(await store.claimDeliveries({ now: at + 4_999, leaseMs: 1, limit: 10 })).toEqual([]);
      const [back] = await store.claimDeliveries({ now: at + 5_000, leaseMs: 60_000, limit: 10 });
      await store.dropDeliveries([back!]);
      expect(await store.claimDeliveries({ now: at + 1_000_000, leaseMs: 1, limit: 10 })).toEqual([]);
    });
  });
}
