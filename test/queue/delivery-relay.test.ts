import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { DeliveryRelay } from "../../src/engine/workflows/delivery-relay.js";
import type { BullmqJobQueue } from "../../src/queue/bullmq/bullmq-job-queue.js";
import { deliveryKeyText } from "../../src/queue/job-queue.js";
import type { NewDelivery, Store } from "../../src/store/store.js";
import { requirePostgres } from "../helpers/postgres.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput } from "../store/store-contract.js";
import { openStoreAndBullmq } from "./store-and-bullmq.js";
import { deadChainWithGateRemoved } from "./dead-chain.js";

/**
 * The relay of scale-out mode: deliveries an append recorded as rows in
 * PostgreSQL become BullMQ jobs (Redis), named by their run key, and the
 * rows go. A relay that dies between the enqueue and the removal leaves
 * the rows leased; relayed again, they add no second job.
 */
const logger = pino({ level: "silent" });
await requirePostgres();

describe("DeliveryRelay: store rows to BullMQ jobs", () => {
  let dispose: () => Promise<void>;
  let store: Store;
  let queue: BullmqJobQueue;
  let rows: (count: number) => NewDelivery[];

  beforeEach(async () => {
    ({ store, queue, dispose } = await openStoreAndBullmq("runnel_relay", logger));
    const ownerId = (await store.createUser(newUserInput())).id;
    const listener = await store.createWorkflow(workflowFor(ownerId, "listener"));
    const emitterId = "p_emitter0000000000000000000";
    const subscriptionId = newId("subscription");
    await store.subscribe({ id: subscriptionId, ownerId, emitterId, listenerId: listener.id, eventName: "", createdAt: Date.now() });
    rows = (count) => {
      const now = Date.now();
      return Array.from({ length: count }, (_, n) => ({ listenerId: listener.id, emitterId, eventId: `e${n}`, ownerId, subscriptionId, channel: "", availableAt: now, createdAt: now + n, event: { n }, indexedAtMs: now + n }));
    };
  });

  afterEach(() => dispose());

  /** Rows left in the store, whatever their lease: claimed as if every lease had run out. */
  const rowsLeft = async () => (await store.claimDeliveries({ now: Date.now() + 3_600_000, leaseMs: 1, limit: 100 })).length;

  it("queues each row as a job named by its run key, with its event, in order, and removes the rows", async () => {
    const recorded = rows(5);
    await store.enqueueDeliveries(recorded);
    let told = 0;
    const relay = new DeliveryRelay({ store, queue, logger, claimer: "inst_a", onRelayed: () => (told += 1) });
    expect(await relay.relayOnce(100)).toBe(5);
    expect(told).toBe(1);
    expect(await rowsLeft()).toBe(0);
    const jobs = await queue.claim(100);
    expect(jobs.map((job) => deliveryKeyText(job))).toEqual(recorded.map((row) => deliveryKeyText(row)));
    expect(jobs.map((job) => job.event)).toEqual(recorded.map((row) => row.event));
    // Nothing more: each row one job.
    expect(await queue.claim(100)).toEqual([]);
    await queue.complete(jobs);
  });

  it("adds no second job when a relay died after queuing and before removing its rows: another relays them again once their lease ends", async () => {
    await store.enqueueDeliveries(rows(4));
    // The process dies between the two: its rows stay, leased to it.
    const dying = new DeliveryRelay({
      store: { ...store, claimDeliveries: store.claimDeliveries.bind(store), dropDeliveries: async () => Promise.reject(new Error("killed")) } as Store,
      queue,
      logger,
      claimer: "inst_dead",
      leaseMs: 300,
    });
    await expect(dying.relayOnce(100)).rejects.toThrow("killed");
    const other = new DeliveryRelay({ store, queue, logger, claimer: "inst_b", leaseMs: 300 });
    // Still leased: not the other relay's yet.
    expect(await other.relayOnce(100)).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await other.relayOnce(100)).toBe(4);
    expect(await rowsLeft()).toBe(0);
    const jobs = await queue.claim(100);
    expect(jobs).toHaveLength(4);
    expect(new Set(jobs.map((job) => deliveryKeyText(job))).size).toBe(4);
    expect(await queue.claim(100)).toEqual([]);
  });

  it("relays what is appended while it runs, woken or by its poll, and stops", async () => {
    const relay = new DeliveryRelay({ store, queue, logger, claimer: "inst_c", pollMs: 5_000 });
    relay.start();
    try {
      await store.enqueueDeliveries(rows(3));
      const started = Date.now();
      relay.wake();
      let claimed: Awaited<ReturnType<BullmqJobQueue["claim"]>> = [];
      while (claimed.length < 3 && Date.now() - started < 4_000) {
        claimed = [...claimed, ...(await queue.claim(100))];
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Well before the 5 s poll: the wake did it.
      expect(claimed).toHaveLength(3);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await relay.stop();
    }
  });

  it("sends the followers of a one-at-a-time line's head taken over after its process died, when the gate was removed meanwhile", async () => {
    const workflow = await deadChainWithGateRemoved(store);
    const relay = new DeliveryRelay({ store, queue, logger, claimer: "inst_a" });
    // The head's lease ran out: relayed, and its chain's followers sent after it.
    expect(await relay.relayOnce(100)).toBe(1);
    expect(await relay.relayOnce(100)).toBe(2);
    const jobs = (await queue.claim(100)).filter((job) => job.listenerId === workflow.id);
    expect(jobs.map((job) => job.event)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await queue.complete(jobs);
  });
});
