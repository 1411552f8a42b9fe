import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput, type StoreBackend } from "./store-contract.js";

/**
 * An append that records its deliveries already claimed (EventBatch.claim),
 * for the process that runs them at once: they answer as a claim would, are
 * leased so that no claim takes them meanwhile, and are run again after a
 * crash as any claimed delivery is.
 */
export function describeHandOffContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, deliveries recorded claimed by their append: ${name}`, () => {
  let backend: StoreBackend;
  let store: Store;
  let ownerId: string;
  let listenerId: string;
  const emitterId = "dc_emitter000000000000000000";

  beforeEach(async () => {
    backend = await makeBackend();
    store = await backend.open();
    ownerId = (await store.createUser(newUserInput())).id;
    listenerId = (await store.createWorkflow(workflowFor(ownerId, "listener"))).id;
    await store.subscribe({ id: newId("subscription"), ownerId, emitterId, listenerId, eventName: "", createdAt: Date.now() });
  });
  afterEach(async () => {
    await store.close();
    await backend.dispose();
  });

  const append = (id: number, now: number) =>
    store.appendEvents({ ownerId, emitterId, emits: [{ event: { n: id }, id }], dedupe: "unique", retention: 100, now, claim: { claimer: "instance_a", leaseMs: 60_000 } });

  it("answers them claimed, with their events, leased against claims, and not again for a duplicate event", async () => {
    const first = await append(1, 1_000);
    expect(first.claimed).toEqual([expect.objectContaining({ listenerId, emitterId, eventId: first.events[0]!.id, status: "running", attempts: 1, event: { n: 1 } })]);
    // Leased for this process: a claim in the meantime finds nothing.
    expect(await store.claimDeliveries({ now: 2_000, leaseMs: 1_000, limit: 10, claimer: "instance_b" })).toEqual([]);
    // The same event again (deduped): no new delivery, nothing handed over.
    expect((await append(1, 3_000)).claimed).toEqual([]);
    // Past the lease (its process died without finishing), a claim takes it, as any expired one.
    const taken = await store.claimDeliveries({ now: 1_000 + 60_001, leaseMs: 1_000, limit: 10, claimer: "instance_b" });
    expect(taken.map((delivery) => delivery.eventId)).toEqual([first.events[0]!.id]);
  });

  it("is run again at the next start of its own process when that process died holding it", async () => {
    const first = await append(2, 5_000);
    expect(await store.requeueDeliveries(6_000, "instance_a")).toBe(1);
    const taken = await store.claimDeliveries({ now: 6_000, leaseMs: 1_000, limit: 10, claimer: "instance_a" });
    expect(taken.map((delivery) => [delivery.eventId, delivery.interruptions])).toEqual([[first.events[0]!.id, 1]]);
  });

  it("hands a held event's delivery over without a row, records the others' rows, and records a held one when asked", async () => {
    const other = (await store.createWorkflow(workflowFor(ownerId, "other listener"))).id;
    await store.subscribe({ id: newId("subscription"), ownerId, emitterId, listenerId: other, eventName: "", createdAt: Date.now() });
    const emit = { event: { n: 3 }, id: 3 };
    const appended = await store.appendEvents({
      ownerId, emitterId, emits: [emit], dedupe: "unique", retention: 100, now: 7_000,
      claim: { claimer: "instance_a", leaseMs: 60_000 },
      held: new Map([[emit, [listenerId]]]),
    });
    const eventId = appended.events[0]!.id;
    const byListener = new Map(appended.claimed!.map((delivery) => [delivery.listenerId, delivery]));
    expect(byListener.get(listenerId)).toMatchObject({ eventId, status: "running", unrecorded: true, event: { n: 3 } });
    expect(byListener.get(other)).toMatchObject({ eventId, status: "running" });
    expect(byListener.get(other)!.unrecorded).toBeUndefined();
    // Only the other listener's delivery has a row: after a crash, a start finds that one alone.
    expect(await store.requeueDeliveries(8_000, "instance_a")).toBe(1);
    const requeued = await store.claimDeliveries({ now: 8_000, leaseMs: 600_000, limit: 10, claimer: "instance_a" });
    expect(requeued.map((delivery) => delivery.listenerId)).toEqual([other]);
    await store.dropDeliveries(requeued);
    // Recorded when its caller is to be answered before its run ends: leased to this process, run again after a crash.
    await store.enqueueDeliveries([byListener.get(listenerId)!], { claimer: "instance_a", until: 70_000 });
    expect(await store.claimDeliveries({ now: 9_000, leaseMs: 1_000, limit: 10, claimer: "instance_b" })).toEqual([]);
    expect(await store.requeueDeliveries(9_000, "instance_a")).toBe(1);
    const recovered = await store.claimDeliveries({ now: 9_000, leaseMs: 1_000, limit: 10, claimer: "instance_a" });
    expect(recovered).toEqual([expect.objectContaining({ listenerId, eventId, event: { n: 3 }, interruptions: 1 })]);
  });
});
}
