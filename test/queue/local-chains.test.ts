import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventHub } from "../../src/engine/event-hub.js";
import { nextTickAfter } from "../../src/engine/sources/timer-schedule.js";
import { LocalJobQueue } from "../../src/queue/local/local-job-queue.js";
import type { Store } from "../../src/store/store.js";
import { deadChainWithGateRemoved } from "./dead-chain.js";
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
    await deadChainWithGateRemoved(store);
    const queue = new LocalJobQueue({ store, hub: new EventHub(), nextTickAfter, logger: pino({ level: "silent" }), claimer: "alive", renewClaims: false });
    const takenOver = await queue.claim(10);
    expect(takenOver.map((job) => [job.event, job.interruptions])).toEqual([[{ n: 1 }, 1]]);
    expect((await queue.claim(10)).map((job) => job.event)).toEqual([{ n: 2 }, { n: 3 }]);
  });
});
