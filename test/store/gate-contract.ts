import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { Workflow, WorkflowRun } from "../../src/domain/workflows.js";
import type { ClaimedDelivery, Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

/**
 * The run gate's part of the Store contract (migration 0025), on each store:
 * deliveries to a gated workflow wait in their key's line at append, an
 * ended run's record frees its slot and admits the next in arrival order
 * (claimed for the caller when asked), rate limits give due times, and a
 * waiting event can be cancelled.
 */
export function describeGateContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, the run gate: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    let ownerId: string;
    const emitter = "dc_emitter0000000000000000000";

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
      ownerId = (await store.createUser(newUserInput())).id;
    });
    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    async function gated(settings: Partial<Workflow["settings"]>): Promise<Workflow> {
      const workflow = await store.createWorkflow(workflowFor(ownerId, `gated-${Math.random().toString(36).slice(2, 8)}`, { settings: { errorNotifications: true, errorRetention: 100, ...settings } }));
      await store.subscribe({ id: newId("subscription"), ownerId, emitterId: emitter, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
      return workflow;
    }

    const append = (events: unknown[], now = Date.now(), claim?: { claimer: string | null; leaseMs: number }) =>
      store.appendEvents({ ownerId, emitterId: emitter, emits: events.map((event) => ({ event })), dedupe: null, retention: 1000, now, ...(claim ? { claim } : {}) });

    const claimAll = (now = Date.now()) => store.claimDeliveries({ now, leaseMs: 30_000, limit: 100 });

    function ended(workflow: Workflow, delivery: ClaimedDelivery, status: WorkflowRun["status"] = "success"): WorkflowRun {
      const at = Date.now();
      return { id: newId("run", at), ownerId, workflowId: workflow.id, emitterId: delivery.emitterId, eventId: delivery.eventId, status, triggerEvent: delivery.event, steps: [], error: null, exitReason: null, replayOf: null, startedAt: at, finishedAt: at, durationMs: 0 };
    }

    it("lets one delivery of concurrency 1 through at a time, and admits the next in arrival order as each run ends", async () => {
      const workflow = await gated({ concurrency: 1 });
      const appended = await append([{ n: 0 }, { n: 1 }, { n: 2 }]);
      expect(appended.deliveries).toBe(1);
      expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 2, inFlight: 1, throttled: 0 });
      const order: unknown[] = [];
      let [running] = await claimAll();
      for (let n = 0; n < 3; n += 1) {
        expect(running!.event).toEqual({ n });
        order.push(running!.event);
        // Nothing else is due while it runs.
        expect(await claimAll()).toEqual([]);
        // Recorded while still retrying: its slot stays taken.
        const retrying = await store.finishRuns({ runs: [{ ...ended(workflow, running!), status: "retrying" }], deliveries: [], appends: [] });
        expect(retrying.admitted ?? []).toEqual([]);
        const finished = await store.finishRuns({ runs: [{ ...ended(workflow, running!), attempt: 2 }], deliveries: [running!], appends: [], admitClaim: { claimer: "me", leaseMs: 30_000 } });
        // Claimed for the caller: nothing is due later (its lease's end is no due time to wake a claimer at).
        expect(finished.admittedLaterAt).toBeUndefined();
        [running] = finished.admitted ?? [];
        if (n < 2) expect(running?.event).toEqual({ n: n + 1 });
      }
      expect(running).toBeUndefined();
      expect(await store.gateStats(ownerId, workflow.id, Date.now())).toEqual({ waiting: 0, inFlight: 0, throttled: 0, oldestWaitingSince: null, nextStartAt: null });
    });

    it("keeps a line per key value; events whose key is missing share one", async () => {
      const workflow = await gated({ concurrency: 1, concurrencyKey: "{{ steps.trigger.event.customer }}" });
      await append([{ customer: "a" }, { customer: "b" }, { customer: "a" }, {}, { other: 1 }]);
      const first = await claimAll();
      expect(first.map((delivery) => delivery.event)).toEqual([{ customer: "a" }, { customer: "b" }, {}]);
      expect((await store.gateStats(ownerId, workflow.id, Date.now())).waiting).toBe(2);
      const noKey = first.find((delivery) => JSON.stringify(delivery.event) === "{}")!;
      const finished = await store.finishRuns({ runs: [ended(workflow, noKey, "error")], deliveries: [noKey], appends: [] });
      // Admitted without a claim: recorded pending for a claimer.
      expect(finished.admittedPending).toBe(1);
      expect((await claimAll()).map((delivery) => delivery.event)).toEqual([{ other: 1 }]);
    });

    it("hands an admission over claimed at append when a slot is free, and never claims a waiting one", async () => {
      await gated({ concurrency: 2 });
      const appended = await append([{ n: 0 }, { n: 1 }, { n: 2 }], Date.now(), { claimer: "api-1", leaseMs: 30_000 });
      expect(appended.claimed?.map((delivery) => delivery.event)).toEqual([{ n: 0 }, { n: 1 }]);
      expect(await claimAll()).toEqual([]);
    });

    it("gives rate-limited admissions due times so that no window holds more than its runs", async () => {
      const workflow = await gated({ rateLimit: { runs: 2, perSeconds: 10 } });
      const now = Date.now();
      const appended = await append([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }], now, { claimer: "api-1", leaseMs: 30_000 });
      // The first two at once (handed over), the others when their window comes: none dropped.
      expect(appended.claimed?.map((delivery) => delivery.event)).toEqual([{ n: 0 }, { n: 1 }]);
      expect(appended.deliveries).toBe(5);
      const stats = await store.gateStats(ownerId, workflow.id, now);
      expect(stats).toMatchObject({ throttled: 3, nextStartAt: now + 10_000 });
      expect(await claimAll(now + 9_999)).toEqual([]);
      expect((await claimAll(now + 10_000)).map((delivery) => delivery.event)).toEqual([{ n: 2 }, { n: 3 }]);
      expect((await claimAll(now + 20_000)).map((delivery) => delivery.event)).toEqual([{ n: 4 }]);
    });

    it("cancels a waiting event: out of its line for good, its run recorded cancelled; an admitted one is not cancelled", async () => {
      const workflow = await gated({ concurrency: 1 });
      const appended = await append([{ n: 0 }, { n: 1 }, { n: 2 }]);
      const [, second] = appended.events;
      const [running] = await claimAll();
      expect(await store.cancelWaiting(ownerId, workflow.id, running!.eventId, Date.now())).toBeNull();
      const cancelled = await store.cancelWaiting(ownerId, workflow.id, second!.id, Date.now());
      expect(cancelled).toMatchObject({ status: "cancelled", eventId: second!.id, triggerEvent: { n: 1 } });
      expect(await store.findRun(ownerId, cancelled!.id)).toMatchObject({ status: "cancelled" });
      expect(await store.cancelWaiting(ownerId, workflow.id, second!.id, Date.now())).toBeNull();
      const finished = await store.finishRuns({ runs: [ended(workflow, running!)], deliveries: [running!], appends: [], admitClaim: { claimer: null, leaseMs: 30_000 } });
      expect(finished.admitted?.map((delivery) => delivery.event)).toEqual([{ n: 2 }]);
    });

    it("lists the waiting events in line order (shared line first, then each key's, arrival order within), paged by event id", async () => {
      const workflow = await gated({ concurrency: 1, concurrencyKey: "{{ steps.trigger.event.customer }}" });
      const before = Date.now();
      const appended = await append([{ customer: "b", n: 0 }, { n: 1 }, { customer: "b", n: 2 }, { n: 3 }, { customer: "a", n: 4 }, { customer: "b", n: 5 }, { n: 6 }]);
      const id = (n: number) => appended.events[n]!.id;
      // Admitted at once (running, not listed): n 0 (line "b"), 1 (shared), 4 (line "a").
      const all = await store.listWaiting(ownerId, workflow.id, { limit: 100 });
      expect(all.totalCount).toBe(4);
      expect(all.items.map((item) => [item.eventId, item.key, item.position])).toEqual([
        [id(3), null, 1],
        [id(6), null, 2],
        [id(2), "b", 1],
        [id(5), "b", 2],
      ]);
      expect(all.items[0]).toMatchObject({ emitterId: emitter });
      expect(all.items[0]!.waitingSince).toBeGreaterThanOrEqual(before);
      const first = await store.listWaiting(ownerId, workflow.id, { limit: 3 });
      expect(first.items.map((item) => item.eventId)).toEqual([id(3), id(6), id(2)]);
      const next = await store.listWaiting(ownerId, workflow.id, { limit: 3, after: id(2) });
      expect(next).toMatchObject({ totalCount: 4, items: [{ eventId: id(5), position: 2 }] });
      const back = await store.listWaiting(ownerId, workflow.id, { limit: 2, before: id(5) });
      expect(back.items.map((item) => item.eventId)).toEqual([id(6), id(2)]);
      // A cancelled one leaves the list, and those behind it move up.
      await store.cancelWaiting(ownerId, workflow.id, id(3), Date.now());
      const after = await store.listWaiting(ownerId, workflow.id, { limit: 100 });
      expect(after.items.map((item) => [item.eventId, item.position])).toEqual([[id(6), 1], [id(2), 1], [id(5), 2]]);
      // A cursor whose event left the gate is refused, naming the parameter.
      await expect(store.listWaiting(ownerId, workflow.id, { limit: 3, after: id(3) })).rejects.toMatchObject({ field: "after" });
      // Another owner sees nothing.
      const stranger = (await store.createUser(newUserInput())).id;
      expect(await store.listWaiting(stranger, workflow.id, { limit: 100 })).toEqual({ items: [], totalCount: 0 });
    });

    it("frees the slot of a delivery that ends without a run (a paused workflow's), admitting the next", async () => {
      const workflow = await gated({ concurrency: 1 });
      await append([{ n: 0 }, { n: 1 }]);
      const [dropped] = await claimAll();
      expect(await store.releaseGateSlots(workflow.id, [{ emitterId: dropped!.emitterId, eventId: dropped!.eventId }], Date.now())).toBe(1);
      // Once only: the slot is free already.
      expect(await store.releaseGateSlots(workflow.id, [{ emitterId: dropped!.emitterId, eventId: dropped!.eventId }], Date.now())).toBe(0);
      expect((await claimAll()).map((delivery) => delivery.event)).toEqual([{ n: 1 }]);
    });

    it("lets the waiting through when the limit is raised or the gate removed, and forgets the gate with its workflow", async () => {
      const workflow = await gated({ concurrency: 1 });
      await append([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
      await store.updateWorkflow({ ...workflow, settings: { ...workflow.settings, concurrency: 2 } });
      expect((await claimAll()).map((delivery) => delivery.event)).toEqual([{ n: 0 }, { n: 1 }]);
      await store.updateWorkflow({ ...workflow, settings: { errorNotifications: true, errorRetention: 100 } });
      expect((await claimAll()).map((delivery) => delivery.event)).toEqual([{ n: 2 }, { n: 3 }]);
      expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 0, inFlight: 0 });
      const again = await gated({ concurrency: 1 });
      await append([{ n: 4 }, { n: 5 }]);
      expect(await store.deleteWorkflow(ownerId, again.id)).toBe(true);
      expect(await store.gateStats(ownerId, again.id, Date.now())).toMatchObject({ waiting: 0, inFlight: 0 });
    });
  });
}
