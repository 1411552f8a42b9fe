import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UnavailableError } from "../../domain/errors.js";
import type { ProcessRecord, ProcessRole } from "../../domain/processes.js";
import type { DeployedSource } from "../../domain/sources.js";
import { openStore } from "../../store/open-store.js";
import type { Store } from "../../store/store.js";
import type { HubMessage, LiveTransport } from "../event-hub.js";
import { ManualRunsOnWorkers, type SourceRunBody } from "./manual-runs-on-workers.js";

/** The live channels of one installation, in memory: what Redis pub/sub or NOTIFY carry between processes. */
class MemoryTransport implements LiveTransport {
  private readonly listeners = new Map<string, Set<(message: HubMessage) => void>>();
  async publish(channel: string, message: HubMessage): Promise<void> {
    for (const listener of this.listeners.get(channel) ?? []) listener(structuredClone(message));
  }
  async subscribe(channel: string, listener: (message: HubMessage) => void): Promise<() => Promise<void>> {
    const set = this.listeners.get(channel) ?? new Set();
    this.listeners.set(channel, set.add(listener));
    return async () => void set.delete(listener);
  }
}

const source = { id: "dc_manual1", ownerId: "u_owner1", nameSlug: "manual" } as DeployedSource;

function processOf(role: ProcessRole, heartbeatAt: number): ProcessRecord {
  return { instanceId: `i_${role}_${heartbeatAt}`, role, version: "test", host: "localhost", pid: 1, url: null, startedAt: heartbeatAt, heartbeatAt, heartbeatIntervalMs: 500, busyRunners: 0, queuedDeliveries: 0 };
}

describe("a source's run now, queued for a worker by an api process", () => {
  let dataDir: string;
  let store: Store;
  const transport = new MemoryTransport();
  const runsOn = (waitMs: number) => new ManualRunsOnWorkers({ store, transport, logger: pino({ level: "silent" }), waitMs: () => waitMs, onAppended: () => undefined });

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "runnel-manual-runs-"));
    store = await openStore({ databaseUrl: null, dataDir });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers 503 at once and queues nothing when no worker beats in the registry (an api process alone, or workers lost)", async () => {
    await store.recordProcess(processOf("api", Date.now()));
    // Its last beat is 6 intervals and more old: lost.
    await store.recordProcess(processOf("worker", Date.now() - 10_000));
    const started = Date.now();
    const error = await runsOn(60_000).run(source, { n: 1 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).message).toMatch(/^Source manual \(dc_manual1\) cannot run now: no worker process of this installation is running .*nothing was queued\.$/);
    expect((error as UnavailableError).retryAfterSeconds).toBe(5);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await store.claimDeliveries({ now: Date.now(), leaseMs: 1_000, limit: 10 })).toEqual([]);
  });

  it("answers with the worker's outcome, reported over the live channel", async () => {
    await store.recordProcess(processOf("worker", Date.now()));
    const api = runsOn(10_000);
    const worker = runsOn(10_000);
    const stop = await api.listen();
    try {
      const answer = api.run(source, { n: 2 });
      // The worker's side: it claims the queued run and reports how it went to whoever waits for it.
      const claimed = await waitForClaim(store);
      expect(claimed.event).toMatchObject({ event: { n: 2 } });
      worker.report((claimed.event as SourceRunBody).request_id, { kind: "ran", ok: true, durationMs: 3, events: [] });
      await expect(answer).resolves.toEqual({ ok: true, durationMs: 3, events: [] });
    } finally {
      await stop();
    }
  });

  it("answers 503 after its wait when a live worker never reports back (it died mid-run, or the outcome was lost)", async () => {
    await store.recordProcess(processOf("all", Date.now()));
    const api = runsOn(300);
    const stop = await api.listen();
    try {
      const started = Date.now();
      const error = await api.run(source, { n: 3 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).message).toMatch(/was queued to run on a worker, but no worker reported back within 0 s\. Check that a worker process is running/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      // Queued all the same: a worker that comes back runs it.
      expect(await store.claimDeliveries({ now: Date.now(), leaseMs: 1_000, limit: 10 })).toHaveLength(1);
    } finally {
      await stop();
    }
  });
});

async function waitForClaim(store: Store) {
  for (let tries = 0; tries < 100; tries++) {
    const [claimed] = await store.claimDeliveries({ now: Date.now(), leaseMs: 5_000, limit: 1 });
    if (claimed) return claimed;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the run now was never queued");
}
