import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sendIdempotencyKey, type NewOutboxSend, type OutboxSend } from "../../src/domain/durable-sends.js";
import { newId } from "../../src/domain/ids.js";
import type { Workflow, WorkflowRun } from "../../src/domain/workflows.js";
import type { ClaimedDelivery, EventBatch, Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

const EMITTER = "dc_emitter000000000000000000";

/** A run of `workflow` for an event, whose one step made two http sends (pending: they go through the outbox). */
function runWithSends(workflow: Workflow, eventId: string, at: number): WorkflowRun {
  const send = (path: string) => ({ destination: "http" as const, target: `POST https://example.test/${path}`, summary: "data {}", status: "pending" as const, detail: null });
  return {
    id: newId("run", at),
    ownerId: workflow.ownerId,
    workflowId: workflow.id,
    emitterId: EMITTER,
    eventId,
    status: "success",
    triggerEvent: { n: eventId },
    steps: [{ id: workflow.steps[0]!.id, name: "a", status: "success", returnValue: null, exports: {}, summary: null, logs: [], startedAt: at, durationMs: 1, sends: [send("one"), send("two")] }],
    error: null,
    exitReason: null,
    replayOf: null,
    startedAt: at,
    finishedAt: at,
    durationMs: 0,
  };
}

function outboxSendsOf(run: WorkflowRun, at: number): NewOutboxSend[] {
  return run.steps[0]!.sends.map((_, index) => ({
    id: sendIdempotencyKey(run.id, 0, index),
    ownerId: run.ownerId,
    workflowId: run.workflowId,
    runId: run.id,
    step: 0,
    send: index,
    type: "http",
    payload: { method: "POST", url: `https://example.test/${index === 0 ? "one" : "two"}` },
    context: { cellId: run.steps[0]!.id, originalEvent: run.triggerEvent, originalEventId: run.eventId, originalEventAtMs: at, sourceType: "HTTP", handlingError: false },
    availableAt: at,
    createdAt: at,
  }));
}

/** The send outbox half of the Store contract: enqueued with the run, leased, settled with the run's record. */
export function describeSendOutboxContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, the send outbox: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    let workflow: Workflow;
    const leaseMs = 60_000;

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
      ownerId = (await store.createUser(newUserInput())).id;
      workflow = await store.createWorkflow(workflowFor(ownerId, "sender"));
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: EMITTER, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
    });
    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    /** A delivery of a fresh event to the workflow, claimed (twice when asked: a second claimer after the lease ran out). */
    async function claimedDelivery(): Promise<ClaimedDelivery> {
      const appended = await store.appendEvents({ ownerId, emitterId: EMITTER, emits: [{ event: { a: 1 } }], dedupe: null, retention: 100, now: Date.now() });
      const [delivery] = await store.claimDeliveries({ now: Date.now(), leaseMs: 1, limit: 10 });
      expect(delivery?.eventId).toBe(appended.events[0]!.id);
      return delivery!;
    }

    /** Records a run with two sends; answers the run and its sends as the outbox keeps them. */
    async function recordedRun(at: number): Promise<{ run: WorkflowRun; sends: NewOutboxSend[] }> {
      const delivery = await claimedDelivery();
      const run = runWithSends(workflow, delivery.eventId, at);
      const sends = outboxSendsOf(run, at);
      const finished = await store.finishRuns({ runs: [run], deliveries: [delivery], appends: [], sends });
      expect([...finished.recorded]).toEqual([run.id]);
      return { run, sends };
    }

    it("puts a recorded run's sends in the outbox with it, in step order; a run recorded before enqueues nothing again", async () => {
      const at = Date.now();
      const delivery = await claimedDelivery();
      const run = runWithSends(workflow, delivery.eventId, at);
      // Not due before their time.
      await store.finishRuns({ runs: [run], deliveries: [delivery], appends: [], sends: outboxSendsOf(run, at).map((send) => ({ ...send, availableAt: at + 10 })) });
      expect(await store.claimSends({ now: at, leaseMs, limit: 10 })).toEqual([]);
      // The same delivery finished again by a second claimer, with a run of its own: the key is taken, so no sends.
      const again = runWithSends(workflow, delivery.eventId, at);
      const second = await store.finishRuns({ runs: [again], deliveries: [delivery], appends: [], sends: outboxSendsOf(again, at) });
      expect(second.recorded.size).toBe(0);

      const claimed = await store.claimSends({ now: at + 10, leaseMs, limit: 10, claimer: "me" });
      expect(claimed.map((send) => send.id)).toEqual([`${run.id}:0:0`, `${run.id}:0:1`]);
      expect(claimed[0]).toEqual({ ...outboxSendsOf(run, at)[0], availableAt: at + 10 + leaseMs, attempts: 1, lastError: null });
    });

    it("leases claimed sends until the lease runs out; a start takes back its own leases, or all of them", async () => {
      const at = Date.now();
      const { run } = await recordedRun(at);
      const first = await store.claimSends({ now: at, leaseMs, limit: 1, claimer: "a" });
      const second = await store.claimSends({ now: at, leaseMs, limit: 10, claimer: "b" });
      expect(first.map((send) => send.id)).toEqual([`${run.id}:0:0`]);
      expect(second.map((send) => send.id)).toEqual([`${run.id}:0:1`]);
      expect(await store.claimSends({ now: at + leaseMs - 1, leaseMs, limit: 10 })).toEqual([]);
      // "b" starts again: only its lease is taken back.
      expect(await store.requeueSends(at, "b")).toBe(1);
      expect((await store.claimSends({ now: at, leaseMs, limit: 10, claimer: "b" })).map((send) => [send.id, send.attempts])).toEqual([[`${run.id}:0:1`, 2]]);
      // The embedded server starting: every lease is its own.
      expect(await store.requeueSends(at)).toBe(2);
      expect((await store.claimSends({ now: at, leaseMs, limit: 10 })).map((send) => send.attempts)).toEqual([2, 3]);
      // A lease that ran out (its process died) is due again without any start.
      expect((await store.claimSends({ now: at + leaseMs, leaseMs, limit: 10 })).map((send) => send.attempts)).toEqual([3, 4]);
    });

    it("settles an attempt with the run's send record: delivered, tried again later, or failed with the workflow's error event", async () => {
      const at = Date.now();
      const { run } = await recordedRun(at);
      const [one, two] = await store.claimSends({ now: at, leaseMs, limit: 10 });
      const sendsOfRun = async () => (await store.findRun(ownerId, run.id))!.steps[0]!.sends.map((send) => [send.status, send.detail]);

      expect(await store.settleSend(one!, { outcome: "delivered", detail: "POST https://example.test/one answered 200" })).toEqual({ settled: true, appended: null });
      const retryAt = at + 5_000;
      expect((await store.settleSend(two!, { outcome: "retry", error: "answered 503", retryAt })).settled).toBe(true);
      expect(await sendsOfRun()).toEqual([
        ["delivered", "POST https://example.test/one answered 200"],
        ["pending", `attempt 1 failed: answered 503; next attempt at ${new Date(retryAt).toISOString()}`],
      ]);
      expect(await store.claimSends({ now: retryAt - 1, leaseMs, limit: 10 })).toEqual([]);
      const [again] = await store.claimSends({ now: retryAt, leaseMs, limit: 10 });
      expect(again).toMatchObject({ id: two!.id, attempts: 2, lastError: "answered 503" });

      // The last attempt fails: the send is gone, its record says failed, and the error event is appended in the same transaction.
      const errorEvent: EventBatch = { ownerId, emitterId: workflow.id, emits: [{ event: { error: { code: "DestinationFailed" } }, name: "$errors", id: again!.id }], dedupe: null, retention: 100, now: retryAt };
      const failed = await store.settleSend(again!, { outcome: "failed", error: "answered 503" }, errorEvent);
      expect(failed.settled).toBe(true);
      expect(failed.appended?.events.map((event) => [event.channel, event.emitId])).toEqual([["$errors", again!.id]]);
      expect((await sendsOfRun())[1]).toEqual(["failed", "answered 503 (given up after 2 attempts)"]);
      expect(await store.claimSends({ now: retryAt + 10 * leaseMs, leaseMs, limit: 10 })).toEqual([]);
      const errors = await store.listEvents(ownerId, workflow.id, { channel: "$errors", page: { limit: 10 } });
      expect(errors.items.map((event) => event.event)).toEqual([{ error: { code: "DestinationFailed" } }]);
    });

    it("settles nothing for an attempt whose lease ran out and that another claimer took", async () => {
      const at = Date.now();
      const { run } = await recordedRun(at);
      const [stale] = await store.claimSends({ now: at, leaseMs, limit: 1 });
      // The other send was due since the start: it comes first.
      const current = (await store.claimSends({ now: at + leaseMs, leaseMs, limit: 10 })).find((send) => send.id === stale!.id);
      expect(current).toMatchObject({ id: stale!.id, attempts: 2 });
      const errorEvent: EventBatch = { ownerId, emitterId: workflow.id, emits: [{ event: {}, name: "$errors" }], dedupe: null, retention: 100, now: at };
      expect(await store.settleSend(stale!, { outcome: "failed", error: "late" }, errorEvent)).toEqual({ settled: false, appended: null });
      expect((await store.findRun(ownerId, run.id))!.steps[0]!.sends[0]!.status).toBe("pending");
      expect((await store.listEvents(ownerId, workflow.id, { channel: "$errors", page: { limit: 10 } })).totalCount).toBe(0);
      expect(await store.settleSend(current as OutboxSend, { outcome: "delivered", detail: null })).toEqual({ settled: true, appended: null });
      expect((await store.findRun(ownerId, run.id))!.steps[0]!.sends[0]!.status).toBe("delivered");
    });

    it("removes a workflow's waiting sends with the workflow", async () => {
      const at = Date.now();
      await recordedRun(at);
      expect(await store.deleteWorkflow(ownerId, workflow.id)).toBe(true);
      expect(await store.claimSends({ now: at, leaseMs, limit: 10 })).toEqual([]);
    });
  });
}
