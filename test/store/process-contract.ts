import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProcessRecord } from "../../src/domain/processes.js";
import type { Store } from "../../src/store/store.js";
import type { StoreBackend } from "./store-contract.js";

/** The process registry and the delivery queue's figures (table `processes`, migration 0022). */
export function describeProcessContract(name: string, makeBackend: () => Promise<StoreBackend>): void {
  describe(`Store contract, process registry: ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;

    beforeEach(async () => {
      backend = await makeBackend();
      store = await backend.open();
    });
    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    const record = (instanceId: string, overrides: Partial<ProcessRecord> = {}): ProcessRecord => ({
      instanceId,
      role: "all",
      version: "1.2.3",
      host: "machine-a",
      pid: 4242,
      url: "http://127.0.0.1:8080",
      startedAt: 1_000,
      heartbeatAt: 2_000,
      heartbeatIntervalMs: 5_000,
      busyRunners: 1,
      queuedDeliveries: 2,
      ...overrides,
    });

    it("records a process, updates it by instance id (a beat, a restart), lists oldest start first and removes it", async () => {
      await store.recordProcess(record("b", { startedAt: 5_000 }));
      await store.recordProcess(record("a"));
      expect(await store.listProcesses()).toEqual([record("a"), record("b", { startedAt: 5_000 })]);
      await store.recordProcess(record("a", { heartbeatAt: 9_000, busyRunners: 3, queuedDeliveries: 0, pid: 7, url: null }));
      expect((await store.listProcesses())[0]).toEqual(record("a", { heartbeatAt: 9_000, busyRunners: 3, queuedDeliveries: 0, pid: 7, url: null }));
      await store.removeProcess("a");
      await store.removeProcess("nobody");
      expect((await store.listProcesses()).map((process) => process.instanceId)).toEqual(["b"]);
    });

    it("counts waiting and running deliveries and the oldest waiting one's age; all zero when empty", async () => {
      expect(await store.deliveryQueueStats(50_000)).toEqual({ waiting: 0, running: 0, oldestWaitMs: 0 });
      const delivery = (eventId: string, createdAt: number, availableAt: number) => ({ listenerId: "p_1", emitterId: "dc_1", eventId, ownerId: "u_1", subscriptionId: "sub_1", channel: "default", availableAt, createdAt, event: {}, indexedAtMs: createdAt });
      await store.enqueueDeliveries([delivery("1-0", 10_000, 10_000), delivery("2-0", 20_000, 90_000)]);
      await store.enqueueDeliveries([delivery("0-0", 1_000, 60_000)], { claimer: "me", until: 60_000 });
      // The running one is older, but it does not wait.
      expect(await store.deliveryQueueStats(50_000)).toEqual({ waiting: 2, running: 1, oldestWaitMs: 40_000 });
      expect(await store.pendingMigrations()).toEqual([]);
    });
  });
}
