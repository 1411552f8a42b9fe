import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { Workflow, WorkflowRun } from "../../src/domain/workflows.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createTestSchema, requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";
import type { ClaimedDelivery, Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput } from "./store-contract.js";

/**
 * A one-at-a-time line's followers (migration 0028), on each store:
 * the record that admits a line's next event hands it over with the next
 * waiting ones, which no one else admits or counts as admitted; the record
 * of the chain takes those it ran out of the line, and those it did not run
 * wait again in their places, whatever happened to the gate meanwhile.
 */
await requirePostgres();

/** Each store, opened fresh for a test, and what removes it. */
const STORES: Array<{ name: string; open(): Promise<{ store: Store; dispose(): Promise<void> }> }> = [
  {
    name: "SQLite",
    async open() {
      const dir = await mkdtemp(join(tmpdir(), "runnel-followers-"));
      const store = createSqliteStore({ file: join(dir, "runnel.sqlite") });
      return { store, dispose: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: "PostgreSQL",
    async open() {
      const schema = await createTestSchema("runnel_followers");
      return { store: createPostgresStore({ connectionString: TEST_DATABASE_URL, schema: schema.schema, maxConnections: 4 }), dispose: () => schema.drop() };
    },
  },
];

describe.each(STORES)("a one-at-a-time line's followers ($name store)", (kind) => {
  let dispose: () => Promise<void>;
  let store: Store;
  let ownerId: string;
  const emitter = "dc_emitter0000000000000000000";
  const claim = { claimer: "me", leaseMs: 30_000 };

  beforeEach(async () => {
    ({ store, dispose } = await kind.open());
    await store.migrate();
    ownerId = (await store.createUser(newUserInput())).id;
  });
  afterEach(async () => {
    await store.close();
    await dispose();
  });

  async function gated(settings: Partial<Workflow["settings"]>): Promise<Workflow> {
    const workflow = await store.createWorkflow(workflowFor(ownerId, `line-${Math.random().toString(36).slice(2, 8)}`, { settings: { errorNotifications: true, errorRetention: 100, ...settings } }));
    await store.subscribe({ id: newId("subscription"), ownerId, emitterId: emitter, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
    return workflow;
  }

  const append = (events: unknown[]) => store.appendEvents({ ownerId, emitterId: emitter, emits: events.map((event) => ({ event })), dedupe: null, retention: 1000, now: Date.now() });

  function ended(workflow: Workflow, delivery: ClaimedDelivery, status: WorkflowRun["status"] = "success"): WorkflowRun {
    const at = Date.now();
    return { id: newId("run", at), ownerId, workflowId: workflow.id, emitterId: delivery.emitterId, eventId: delivery.eventId, status, triggerEvent: delivery.event, steps: [], error: null, exitReason: null, replayOf: null, startedAt: at, finishedAt: at, durationMs: 0 };
  }

  /** Appends n events to the line, runs the first, and answers the admission its record made (the next event, with followers). */
  async function admittedWithFollowers(workflow: Workflow, n: number): Promise<ClaimedDelivery> {
    await append(Array.from({ length: n }, (_, i) => ({ n: i })));
    const [first] = await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 });
    expect(first?.event).toEqual({ n: 0 });
    const finished = await store.finishRuns({ runs: [ended(workflow, first!)], deliveries: [first!], appends: [], admitClaim: claim });
    expect(finished.admitted).toHaveLength(1);
    return finished.admitted![0]!;
  }

  it("hands the admitted event over with the line's next waiting ones, in order, counted as waiting and listed", async () => {
    const workflow = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(workflow, 20);
    expect(head.event).toEqual({ n: 1 });
    // At most 16 followers, in arrival order, handed over unrecorded (no delivery row) and claimed like the head.
    expect(head.followers?.map((follower) => follower.event)).toEqual(Array.from({ length: 16 }, (_, i) => ({ n: i + 2 })));
    expect(head.followers?.every((follower) => follower.unrecorded === true && follower.status === "running" && follower.attempts === 1)).toBe(true);
    expect(head.lineKey).toBe("");
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 18, inFlight: 1 });
    expect((await store.listWaiting(ownerId, workflow.id, { limit: 100 })).totalCount).toBe(18);
    // Nothing else is due: followers have no delivery, and the cancel of a waiting event does not take them (the chain does).
    expect(await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 })).toEqual([]);
    expect(await store.cancelWaiting(ownerId, workflow.id, head.followers![0]!.eventId, Date.now())).toBeNull();
    expect(await store.cancelWaiting(ownerId, workflow.id, (await store.listWaiting(ownerId, workflow.id, { limit: 100 })).items.at(-1)!.eventId, Date.now())).not.toBeNull();
  });

  it("takes the followers a chain ran out of the line, lets those it did not run wait again, and admits the next after the last one run", async () => {
    const workflow = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(workflow, 10);
    const followers = head.followers!;
    expect(followers).toHaveLength(8);
    // The chain ran the head and three followers, then stopped.
    const ran = [head, ...followers.slice(0, 3)];
    const finished = await store.finishRuns({ runs: ran.map((delivery) => ended(workflow, delivery)), deliveries: [head], appends: [], admitClaim: claim, chains: [{ workflowId: workflow.id, headEventId: head.eventId, gateKey: "" }] });
    const next = finished.admitted ?? [];
    // The first not run is the next admitted (its place kept), and it takes the rest as its own followers.
    expect(next.map((delivery) => delivery.event)).toEqual([{ n: 5 }]);
    expect(next[0]!.followers?.map((follower) => follower.event)).toEqual([{ n: 6 }, { n: 7 }, { n: 8 }, { n: 9 }]);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 4, inFlight: 1 });
  });

  it("gives the slot to a follower that waits to retry: nothing is admitted, the rest wait until it ends", async () => {
    const workflow = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(workflow, 5);
    const [first, second] = head.followers!;
    const chains = [{ workflowId: workflow.id, headEventId: head.eventId, gateKey: "" }];
    const retrying = await store.finishRuns({ runs: [ended(workflow, head), { ...ended(workflow, first!), status: "retrying" }], deliveries: [head], appends: [], admitClaim: claim, chains });
    expect(retrying.admitted ?? []).toEqual([]);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 2, inFlight: 1 });
    // Its retry ends: its slot goes to the next in line, the second follower, which was waiting again.
    await store.enqueueDeliveries([first!], { claimer: "me", until: Date.now() + 30_000 });
    const done = await store.finishRuns({ runs: [{ ...ended(workflow, first!), attempt: 2 }], deliveries: [first!], appends: [], admitClaim: claim });
    expect(done.admitted?.map((delivery) => delivery.event)).toEqual([second!.event]);
  });

  it("lets a chain's unrun followers go when the gate was removed while it ran", async () => {
    const workflow = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(workflow, 6);
    expect(head.followers).toHaveLength(4);
    const { concurrency: _removed, ...ungated } = workflow.settings;
    await store.updateWorkflow({ ...workflow, settings: ungated });
    // The removal admitted nothing of the chain's; its record sends the followers it did not run.
    expect(await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 })).toEqual([]);
    const finished = await store.finishRuns({ runs: [ended(workflow, head), ended(workflow, head.followers![0]!)], deliveries: [head], appends: [], chains: [{ workflowId: workflow.id, headEventId: head.eventId, gateKey: "" }] });
    expect(finished.admittedPending).toBe(3);
    const sent = await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 });
    expect(sent.map((delivery) => delivery.event)).toEqual([{ n: 3 }, { n: 4 }, { n: 5 }]);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 0, inFlight: 0 });
  });

  it("sets every follower waiting again when the embedded server starts, after a stop that left a chain unrecorded", async () => {
    const workflow = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(workflow, 5);
    expect(head.followers).toHaveLength(3);
    // The process died with the head running: on start its delivery is run again, and the followers wait in their places.
    expect(await store.requeueDeliveries(Date.now())).toBe(1);
    const [again] = await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 });
    expect(again?.eventId).toBe(head.eventId);
    const finished = await store.finishRuns({ runs: [ended(workflow, again!)], deliveries: [again!], appends: [], admitClaim: claim });
    expect(finished.admitted?.map((delivery) => delivery.event)).toEqual([{ n: 2 }]);
    expect(finished.admitted![0]!.followers?.map((follower) => follower.event)).toEqual([{ n: 3 }, { n: 4 }]);
  });

  it("lets the followers of a head recorded without its chain (run again after its process died) wait again, first in line", async () => {
    const workflow = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(workflow, 6);
    expect(head.followers?.map((follower) => follower.event)).toEqual([{ n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }]);
    // Another process ran the head again, with no chain: its record frees the slot, and the line goes on from n 2.
    const finished = await store.finishRuns({ runs: [{ ...ended(workflow, head), attempt: 1 }], deliveries: [head], appends: [], admitClaim: claim });
    expect(finished.admitted?.map((delivery) => delivery.event)).toEqual([{ n: 2 }]);
    expect(finished.admitted![0]!.followers?.map((follower) => follower.event)).toEqual([{ n: 3 }, { n: 4 }, { n: 5 }]);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 3, inFlight: 1 });
  });

  it("releases the chain of a head taken over after its process died: its followers wait again, or go when the gate was removed", async () => {
    const kept = await gated({ concurrency: 1 });
    const keptHead = await admittedWithFollowers(kept, 4);
    expect(keptHead.followers).toHaveLength(2);
    // The gate still holds the head's slot (its run goes again): the followers only wait again, first in line.
    expect(await store.releaseChainsOf([keptHead], Date.now())).toBe(0);
    expect(await store.gateStats(ownerId, kept.id, Date.now())).toMatchObject({ waiting: 2, inFlight: 1 });
    const again = await store.finishRuns({ runs: [ended(kept, keptHead)], deliveries: [keptHead], appends: [], admitClaim: claim });
    expect(again.admitted?.map((delivery) => delivery.event)).toEqual([{ n: 2 }]);

    const removed = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(removed, 5);
    expect(head.followers).toHaveLength(3);
    const { concurrency: _removed, ...ungated } = removed.settings;
    await store.updateWorkflow({ ...removed, settings: ungated });
    // No gate to release them through the head's run again: the take-over sends them.
    expect(await store.releaseChainsOf([head], Date.now())).toBe(3);
    const sent = (await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 20 })).filter((delivery) => delivery.listenerId === removed.id);
    expect(sent.map((delivery) => delivery.event)).toEqual([{ n: 2 }, { n: 3 }, { n: 4 }]);
  });

  it("keeps a follower whose delivery was recorded before the stop (it waited to retry) as admitted at the start, never admitted twice", async () => {
    const workflow = await gated({ concurrency: 1 });
    const head = await admittedWithFollowers(workflow, 5);
    const [first] = head.followers!;
    // It waited to retry: its delivery recorded, then the process stopped before the chain's record.
    await store.enqueueDeliveries([first!], { claimer: "me", until: Date.now() + 30_000 });
    expect(await store.requeueDeliveries(Date.now())).toBe(2);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 2, inFlight: 2 });
    const again = await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 });
    expect(again.map((delivery) => delivery.eventId).sort()).toEqual([head.eventId, first!.eventId].sort());
    const headRecorded = await store.finishRuns({ runs: [ended(workflow, again.find((delivery) => delivery.eventId === head.eventId)!)], deliveries: [head], appends: [], admitClaim: claim });
    expect(headRecorded.admitted ?? []).toEqual([]);
    const firstRecorded = await store.finishRuns({ runs: [ended(workflow, first!)], deliveries: [first!], appends: [], admitClaim: claim });
    expect(firstRecorded.admitted?.map((delivery) => delivery.event)).toEqual([{ n: 3 }]);
  });

  it("takes no followers for a line of more than one slot, or under a rate limit", async () => {
    for (const settings of [{ concurrency: 2 }, { concurrency: 1, rateLimit: { runs: 100, perSeconds: 1 } }]) {
      const workflow = await gated(settings);
      await append(Array.from({ length: 6 }, (_, i) => ({ n: i })));
      const running = (await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 })).filter((delivery) => delivery.listenerId === workflow.id);
      const finished = await store.finishRuns({ runs: [ended(workflow, running[0]!)], deliveries: [running[0]!], appends: [], admitClaim: claim });
      expect(finished.admitted?.length).toBe(1);
      expect(finished.admitted![0]!.followers).toBeUndefined();
    }
  });
});
