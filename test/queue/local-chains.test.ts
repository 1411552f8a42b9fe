import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { EventHub } from "../../src/engine/event-hub.js";
import { nextTickAfter } from "../../src/engine/sources/timer-schedule.js";
import { LocalJobQueue } from "../../src/queue/local/local-job-queue.js";
import type { Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { newUserInput } from "../store/store-contract.js";
import { sqliteDatabase, type SharedDatabase } from "./local-fixture.js";

/**
 * The local queue taking over a delivery whose process died (its lease ran
 * out) that headed a one-at-a-time line's chain (run-gate-work.ts): the
 * chain is lost, so its followers wait again, and go at once when the line's
 * gate was removed meanwhile (the head's run again finds no gate to release
 * them through).
 */
describe("the local queue taking over a line's head", () => {
  let database: SharedDatabase;
  let store: Store;

  beforeEach(async () => {
    database = await sqliteDatabase();
    store = database.connect();
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it("sends the followers of a head whose process died, when the concurrency was removed meanwhile", async () => {
    const ownerId = (await store.createUser(newUserInput())).id;
    const workflow = await store.createWorkflow(workflowFor(ownerId, "line", { settings: { errorNotifications: true, errorRetention: 100, concurrency: 1 } }));
    const emitterId = "dc_emitter0000000000000000000";
    await store.subscribe({ id: newId("subscription"), ownerId, emitterId, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
    await store.appendEvents({ ownerId, emitterId, emits: [0, 1, 2, 3].map((n) => ({ event: { n } })), dedupe: null, retention: 100, now: Date.now() });
    const [first] = await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 });
    const at = Date.now();
    const run = { id: newId("run", at), ownerId, workflowId: workflow.id, emitterId, eventId: first!.eventId, status: "success" as const, triggerEvent: first!.event, steps: [], error: null, exitReason: null, replayOf: null, startedAt: at, finishedAt: at, durationMs: 0 };
    // A process ("dead") recorded the first run: the next event is its, with the two behind it as followers; then it died.
    const { admitted } = await store.finishRuns({ runs: [run], deliveries: [first!], appends: [], admitClaim: { claimer: "dead", leaseMs: 1 } });
    expect(admitted?.[0]?.followers?.map((follower) => follower.event)).toEqual([{ n: 2 }, { n: 3 }]);
    const { concurrency: _removed, ...ungated } = workflow.settings;
    await store.updateWorkflow({ ...workflow, settings: ungated });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const queue = new LocalJobQueue({ store, hub: new EventHub(), nextTickAfter, logger: pino({ level: "silent" }), claimer: "alive", renewClaims: false });
    const takenOver = await queue.claim(10);
    expect(takenOver.map((job) => [job.event, job.interruptions])).toEqual([[{ n: 1 }, 1]]);
    expect((await queue.claim(10)).map((job) => job.event)).toEqual([{ n: 2 }, { n: 3 }]);
  });
});
