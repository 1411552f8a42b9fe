import type { Logger } from "pino";
import type { DeployedSource } from "../../domain/sources.js";
import type { Workflow } from "../../domain/workflows.js";
import type { ClaimedDelivery, Store } from "../../store/store.js";
import { ExpiringCache } from "../expiring-cache.js";
import type { RunExecutor } from "./run-executor.js";

export interface DeliveryWorkerOptions {
  store: Store;
  executor: RunExecutor;
  logger: Logger;
  /** How often the store is asked when nothing woke the worker (other processes' work, expired leases). Default 1 s. */
  pollMs?: number;
  /** How long a claimed delivery is ours before another claimer may take it (its process died). Default 10 min. */
  leaseMs?: number;
  /** This process's instance id, recorded with its leases (see Store.requeueDeliveries). */
  claimer?: string;
  /** Deliveries claimed at once. Default 64. */
  batchSize?: number;
  /** Batches running at once. Default 4 (as many as the sandbox has runners). */
  concurrency?: number;
  now?: () => number;
}

/** After this many attempts that failed in Runnel itself (not in user code), a delivery is given up and logged. */
const MAX_ATTEMPTS = 10;
/** Workflows and sources are re-read at most this often while busy; local changes clear them at once. */
const CACHE_MS = 1_000;

/**
 * Takes deliveries from the store's durable queue and runs them: claims a
 * batch (leased), groups it by listener, and hands each group to the
 * executor, which records the runs and removes the deliveries in one
 * transaction. A process killed mid-run leaves its deliveries leased; the
 * embedded server requeues them on start, a cluster when the lease expires.
 */
export class DeliveryWorker {
  private readonly workflows = new ExpiringCache<string, Workflow | null>({ ttlMs: CACHE_MS, maxEntries: 10_000 });
  private readonly sources = new ExpiringCache<string, DeployedSource | null>({ ttlMs: CACHE_MS, maxEntries: 10_000 });
  private readonly running = new Set<Promise<void>>();
  private readonly now: () => number;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private woken = false;
  private wakeUp: (() => void) | null = null;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Starts taking deliveries. `requeue`: "all", every leased one is ours to
   * run again (the embedded server starting); "own", those this instance
   * held before it stopped (a process of a shared database starting again).
   */
  async start({ requeue }: { requeue: "all" | "own" | false }): Promise<void> {
    if (requeue === "all" || (requeue === "own" && this.options.claimer)) {
      const count = await this.options.store.requeueDeliveries(this.now(), requeue === "own" ? this.options.claimer : undefined);
      if (count > 0) this.options.logger.info({ count }, "runs interrupted by the last stop are run again");
    }
    this.loop ??= this.run();
  }

  /** New deliveries may be waiting: look now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** A workflow or source changed here: forget what was cached of it. */
  forget(id: string): void {
    this.workflows.delete(id);
    this.sources.delete(id);
  }

  /** Stops claiming and waits for the batches in flight to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
    await Promise.all(this.running);
  }

  private async run(): Promise<void> {
    const concurrency = this.options.concurrency ?? 4;
    while (!this.stopped) {
      if (this.running.size >= concurrency) {
        await Promise.race(this.running);
        continue;
      }
      this.woken = false;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await this.options.store.claimDeliveries({ now: this.now(), leaseMs: this.options.leaseMs ?? 600_000, limit: this.options.batchSize ?? 64, claimer: this.options.claimer });
      } catch (error) {
        if (this.stopped) break;
        this.options.logger.error({ err: error }, "could not claim deliveries; trying again shortly");
        await this.idle();
        continue;
      }
      if (claimed.length > 0) for (const group of groupBy(claimed, (delivery) => delivery.listenerId).values()) this.track(this.runGroup(group));
      // A short claim took all there was: wait for news rather than ask the store again for nothing.
      if (claimed.length < (this.options.batchSize ?? 64) && !this.woken) await this.idle();
    }
  }

  /**
   * A finished batch frees a slot; the loop, when it waited for one, claims
   * again by itself. It is not woken: new deliveries wake it as they are
   * recorded, and a wake per finished batch was a claim that mostly found
   * nothing (two of every three claims, under load).
   */
  private track(task: Promise<void>): void {
    const tracked = task.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Waits for a wake, or the poll interval. */
  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.options.pollMs ?? 1_000);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        done();
      };
    });
  }

  private async runGroup(deliveries: ClaimedDelivery[]): Promise<void> {
    const { store, executor, logger } = this.options;
    const first = deliveries[0]!;
    try {
      const workflow = await this.workflowOf(first.ownerId, first.listenerId);
      if (!workflow || !workflow.active) {
        // Deleted or deactivated: what it was sent is not run (a paused workflow does not pile up work).
        await store.dropDeliveries(deliveries);
        return;
      }
      let made = 0;
      for (const [kind, group] of await this.byTriggerKind(deliveries)) made += await executor.runBatch(workflow, group, kind);
      // Its runs emitted to listeners ($errors, $.send.emit): their runs are waiting.
      if (made > 0) this.wake();
    } catch (error) {
      const given = deliveries.filter((delivery) => delivery.attempts >= MAX_ATTEMPTS);
      const retry = deliveries.filter((delivery) => delivery.attempts < MAX_ATTEMPTS);
      logger.error({ err: error, listenerId: first.listenerId, deliveries: deliveries.length, givenUp: given.length }, "runs could not be recorded; they will be tried again");
      await store.dropDeliveries(given).catch(() => undefined);
      const backoff = Math.min(60_000, 1_000 * 2 ** Math.min(6, first.attempts));
      await store.releaseDeliveries(retry, this.now() + backoff).catch(() => undefined);
    }
  }

  private async workflowOf(ownerId: string, workflowId: string): Promise<Workflow | null> {
    const cached = this.workflows.get(workflowId);
    if (cached !== undefined && (cached === null || cached.ownerId === ownerId)) return cached;
    return this.workflows.set(workflowId, await this.options.store.findWorkflow(ownerId, workflowId));
  }

  /** The deliveries by the kind of source they came from (HTTP, timer, other): it sets their time limit and source type. */
  private async byTriggerKind(deliveries: ClaimedDelivery[]): Promise<Map<TriggerKind, ClaimedDelivery[]>> {
    const kinds = new Map<string, TriggerKind>();
    for (const { emitterId, ownerId } of deliveries) {
      if (kinds.has(emitterId)) continue;
      let source = emitterId.startsWith("dc_") ? this.sources.get(emitterId) : null;
      if (source === undefined) source = this.sources.set(emitterId, await this.options.store.findSource(ownerId, emitterId));
      kinds.set(emitterId, source?.endpointToken ? "http" : source?.timer ? "timer" : "other");
    }
    return groupBy(deliveries, (delivery) => kinds.get(delivery.emitterId)!);
  }
}

type TriggerKind = "http" | "timer" | "other";

function groupBy<T, K>(items: T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
