import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { QueueHandOff } from "../../src/engine/workflows/queue-hand-off.js";
import type { BullmqJobQueue } from "../../src/queue/bullmq/bullmq-job-queue.js";
import { deliveryKeyText } from "../../src/queue/job-queue.js";
import type { Store } from "../../src/store/store.js";
import { requirePostgres } from "../helpers/postgres.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput } from "../store/store-contract.js";
import { openStoreAndBullmq } from "./store-and-bullmq.js";

/**
 * The append's hand-off in scale-out mode: deliveries go onto BullMQ from
 * the process that appended them, as soon as the append commits, and their
 * rows go; a workflow answering its own caller (held) never had one. When
 * BullMQ does not take them, nothing is lost: the held ones get a row, the
 * others keep theirs, for the relay.
 */
const logger = pino({ level: "silent" });
const LEASE_MS = 30_000;
await requirePostgres();

describe("QueueHandOff: an append's deliveries straight onto BullMQ", () => {
  let dispose: () => Promise<void>;
  let store: Store;
  let queue: BullmqJobQueue;
  let ownerId: string;
  let caller: string;
  let other: string;
  const emitterId = "dc_emitter000000000000000000";
  let told: { queued: number; leftInStore: number };
  let handOff: QueueHandOff;

  beforeEach(async () => {
    ({ store, queue, dispose } = await openStoreAndBullmq("runnel_handoff", logger));
    ownerId = (await store.createUser(newUserInput())).id;
    caller = (await store.createWorkflow(workflowFor(ownerId, "answers its caller"))).id;
    other = (await store.createWorkflow(workflowFor(ownerId, "another listener"))).id;
    for (const listenerId of [caller, other]) await store.subscribe({ id: newId("subscription"), ownerId, emitterId, listenerId, eventName: "", createdAt: Date.now() });
    told = { queued: 0, leftInStore: 0 };
    handOff = new QueueHandOff({ store, queue, logger, claimer: "inst_api", leaseMs: LEASE_MS, onQueued: () => (told.queued += 1), onLeftInStore: () => (told.leftInStore += 1) });
  });

  afterEach(() => dispose());

  /** An HTTP request's append as the ResultWriter makes it: claimed for the hand-off, the caller's workflow held. */
  const appendRequest = async (n: number) => {
    const emit = { event: { n }, id: n };
    const appended = await store.appendEvents({
      ownerId, emitterId, emits: [emit], dedupe: "unique", retention: 100, now: Date.now(),
      claim: handOff.claimFor()!,
      held: new Map([[emit, [caller]]]),
    });
    return appended;
  };
  /** What a relay would take now (taken for an hour: not again by a later look); all rows are claimable an hour on. */
  const claimableNow = async () => (await store.claimDeliveries({ now: Date.now(), leaseMs: 3_600_000, limit: 100 })).map((row) => `${row.listenerId === caller ? "caller" : "other"}:${(row.event as { n: number }).n}`).sort();
  const rowsLeft = async () => (await store.claimDeliveries({ now: Date.now() + 3_600_000, leaseMs: 1, limit: 100 })).length;

  it("queues the deliveries of one turn in one go, named by their run keys, and leaves no row behind", async () => {
    const appends = await Promise.all([1, 2, 3].map(appendRequest));
    const keys = appends.flatMap((appended) => appended.claimed!.map((delivery) => deliveryKeyText(delivery)));
    expect(keys).toHaveLength(6);
    for (const appended of appends) handOff.take(appended.claimed!);
    await handOff.stop();
    expect(told).toEqual({ queued: 1, leftInStore: 0 });
    expect(await rowsLeft()).toBe(0);
    const jobs = await queue.claim(100);
    expect(jobs.map((job) => deliveryKeyText(job)).sort()).toEqual([...keys].sort());
    // The queued job of a held delivery is an ordinary one: durable in BullMQ, nothing left "unrecorded".
    expect(jobs.every((job) => job.unrecorded === undefined)).toBe(true);
    expect(jobs.find((job) => job.listenerId === caller)?.event).toEqual({ n: 1 });
    await queue.complete(jobs);
    // After stop: no claim for appends, which then record their rows pending for the relay.
    expect(handOff.claimFor()).toBeNull();
  });

  it("leaves the deliveries to the relay when BullMQ does not take them: the held one gets a row now, the others keep theirs until their lease ends", async () => {
    const appended = await appendRequest(7);
    // Leased to this process meanwhile: nothing for a relay yet, and the held delivery has no row at all.
    expect(await claimableNow()).toEqual([]);
    await queue.close();
    handOff.take(appended.claimed!);
    await handOff.stop();
    expect(told).toEqual({ queued: 0, leftInStore: 1 });
    expect(await claimableNow()).toEqual(["caller:7"]);
    const later = await store.claimDeliveries({ now: Date.now() + LEASE_MS + 1, leaseMs: 1, limit: 100 });
    expect(later.map((row) => row.listenerId)).toEqual([other]);
  });
});
