import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { newId } from "../../src/domain/ids.js";
import type { DeployedSource, SavedComponent, TimerSchedule } from "../../src/domain/sources.js";
import { EventHub } from "../../src/engine/event-hub.js";
import { firstTick, nextTickAfter } from "../../src/engine/sources/timer-schedule.js";
import { LocalJobQueue } from "../../src/queue/local/local-job-queue.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { newUserInput } from "../store/store-contract.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import type { QueueFixture } from "./conformance.js";

/** A database that each instance opens with a store of its own (as processes sharing it would), and its removal. */
export interface SharedDatabase {
  connect(): Store;
  drop(): Promise<void>;
}

/** One SQLite file: the embedded server's database. */
export async function sqliteDatabase(): Promise<SharedDatabase> {
  const dir = await mkdtemp(join(tmpdir(), "runnel-queue-"));
  return { connect: () => createSqliteStore({ file: join(dir, "runnel.sqlite") }), drop: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The local adapter's backend: a database every instance opens with a
 * store of its own, and the process's EventHub (live messages of the local
 * adapter stay in one process).
 */
export async function localFixture(database: SharedDatabase): Promise<QueueFixture> {
  const stores: Store[] = [];
  const openStore = async () => {
    const store = database.connect();
    await store.migrate();
    stores.push(store);
    return store;
  };
  const setup = await openStore();
  const ownerId = (await setup.createUser(newUserInput())).id;
  const listener = await setup.createWorkflow(workflowFor(ownerId, "listener"));
  const emitterId = "p_emitter0000000000000000000";
  const subscriptionId = newId("subscription");
  await setup.subscribe({ id: subscriptionId, ownerId, emitterId, listenerId: listener.id, eventName: "", createdAt: Date.now() });
  const component = await setup.saveComponent(timerComponent(ownerId));
  const hub = new EventHub();
  const logger = pino({ level: "silent" });

  return {
    async open({ leaseMs, claimer, renewClaims }) {
      return new LocalJobQueue({ store: await openStore(), hub, nextTickAfter, logger, leaseMs, claimer: claimer ?? `instance-${randomUUID()}`, timerPollMs: 200, ...(renewClaims === false ? { renewClaims } : {}) });
    },
    delivery(eventId, availableAt = Date.now()) {
      const now = Date.now();
      return { listenerId: listener.id, emitterId, eventId, ownerId, subscriptionId, channel: "", availableAt, createdAt: now, event: { n: eventId }, indexedAtMs: now };
    },
    async timer(schedule) {
      const source = await setup.createSource(timerSource(ownerId, component.id, schedule, firstTick(schedule, Date.now())), {});
      return { sourceId: source.id, ownerId, schedule };
    },
    async removeTimer(timer) {
      await setup.deleteSource(timer.ownerId, timer.sourceId);
    },
    async dispose() {
      for (const store of stores.splice(0)) await store.close().catch(() => undefined);
      await database.drop();
    },
  };
}

function timerComponent(ownerId: string): SavedComponent {
  const now = Date.now();
  return {
    id: newId("savedComponent"),
    ownerId,
    name: "ticker",
    version: "0.1.0",
    key: "ticker",
    kind: "source",
    code: "export default {}",
    codeHash: "h",
    bundle: "module.exports = {}",
    bundleHash: "b",
    bundleMap: null,
    lock: null,
    manifest: { props: {}, methods: [], hooks: [], hasRun: true, hasAdditionalProps: false },
    createdAt: now,
    updatedAt: now,
  };
}

function timerSource(ownerId: string, componentId: string, timer: TimerSchedule, nextTickAt: number): DeployedSource {
  const now = Date.now();
  return {
    id: newId("deployedComponent"),
    ownerId,
    componentId,
    name: "ticker",
    nameSlug: "ticker",
    configuredProps: {},
    active: true,
    endpointToken: null,
    timer,
    nextTickAt,
    retention: 100,
    limits: null,
    createdAt: now,
    updatedAt: now,
  };
}
