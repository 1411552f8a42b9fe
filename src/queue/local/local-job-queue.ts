import type { Logger } from "pino";
import type { DeliveryKey } from "../../domain/subscriptions.js";
import type { TimerSchedule } from "../../domain/sources.js";
import type { ClaimedDelivery, NewDelivery, Store } from "../../store/store.js";
import { ClaimRenewal } from "../claim-renewal.js";
import type { ClaimedJob, JobQueue, LiveMessage, QueueStats, ScheduledTimer, TimerJob, TimerTick } from "../job-queue.js";
import { StoreTimerTicks } from "./store-timer-ticks.js";

export interface LocalJobQueueOptions {
  store: Store;
  /** The process's live fan-out (the engine's EventHub: SSE streams listen to it). */
  hub: LiveHub;
  /** When a timer's tick after `previousDue` is (the engine's nextTickAfter: the schedule's rule lives with the sources). */
  nextTickAfter: (schedule: TimerSchedule, previousDue: number, now: number) => number;
  logger: Logger;
  /**
   * This process's instance id, recorded with its leases (takeBackInterrupted
   * "own", and renewal: the rows claimed by it are renewed together). Without
   * one, the rows claimed without an id are renewed: one process alone.
   */
  claimer?: string;
  /** How long a claim is this instance's from its last renewal before another may take it. Default 30 s. */
  leaseMs?: number;
  /** Whether held claims are renewed. Default true; false only where a test plays a holder frozen past its lease. */
  renewClaims?: boolean;
  /** Longest sleep between looks for due timers. Default 5 s. */
  timerPollMs?: number;
  now?: () => number;
}

const DEFAULT_LEASE_MS = 30_000;

/** The in-process fan-out the local adapter publishes to: the engine's EventHub has this shape. */
export interface LiveHub {
  publish(channel: string, message: LiveMessage): void;
  subscribe(channel: string, listener: (message: LiveMessage) => void): () => void;
}

/**
 * The embedded adapter: today's store-backed mechanisms behind the port.
 * Deliveries are the store's leased rows (a claim's attempt count fences
 * it: a takeover counts one more), timers the sources' due times claimed
 * with claimTick, and live messages the in-process EventHub (one process:
 * every subscriber is here). Held claims are renewed by claimer, one
 * UPDATE for all (see ClaimRenewal).
 */
export class LocalJobQueue implements JobQueue {
  readonly kind = "local" as const;
  readonly settlesInStore = true;
  /** One process: the engine wakes its own worker as it queues. */
  readonly onQueuedJobs = null;
  private ticks: StoreTimerTicks | null = null;
  private readonly now: () => number;
  private readonly renewal: ClaimRenewal;

  constructor(private readonly options: LocalJobQueueOptions) {
    this.now = options.now ?? Date.now;
    this.renewal = new ClaimRenewal({
      leaseMs: this.leaseMs,
      logger: options.logger,
      renew: async () => (await options.store.renewDeliveryLeases(options.claimer ?? null, this.now() + this.leaseMs)) > 0,
    });
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  async enqueue(deliveries: NewDelivery[]): Promise<void> {
    await this.options.store.enqueueDeliveries(deliveries);
  }

  async claim(limit: number): Promise<ClaimedJob[]> {
    const claimed = await this.options.store.claimDeliveries({
      now: this.now(),
      leaseMs: this.leaseMs,
      limit,
      claimer: this.options.claimer,
    });
    // Rows that were running when their process died: a one-at-a-time line's chain such a row headed is lost; its
    // followers wait again (or go, when the line's gate was removed meanwhile: claimed next).
    const takenOver = claimed.filter((row) => row.interruptions > 0);
    if (takenOver.length > 0) await this.options.store.releaseChainsOf(takenOver, this.now());
    // In place: the embedded hot path allocates no second object per run.
    return this.adopt(claimed);
  }

  /**
   * Deliveries an append recorded already claimed for this instance (the
   * embedded hand-off, see ResultWriter): claims of this queue, settled as
   * any other (renewed too). Only this adapter has them: BullMQ's jobs are
   * never claimed at append time.
   */
  adopt(claimed: ClaimedDelivery[]): ClaimedJob[] {
    if (claimed.length > 0 && this.options.renewClaims !== false) this.renewal.held();
    for (const delivery of claimed) (delivery as { claim?: string }).claim = String(delivery.attempts);
    return claimed as ClaimedJob[];
  }

  complete(jobs: ClaimedJob[]): Promise<DeliveryKey[]> {
    return this.options.store.settleClaimedDeliveries(jobs.map(fenceOf), null);
  }

  retry(jobs: ClaimedJob[], retryAt: number): Promise<DeliveryKey[]> {
    return this.options.store.settleClaimedDeliveries(jobs.map(fenceOf), retryAt);
  }

  hurry(keys: DeliveryKey[]): Promise<number> {
    return this.options.store.hurryDeliveries(keys, this.now());
  }

  stats(now: number): Promise<QueueStats> {
    return this.options.store.deliveryQueueStats(now);
  }

  takeBackInterrupted(scope: "own" | "all"): Promise<number> {
    // Without an instance id there is no "own" to tell apart: nothing is taken back before its lease ends.
    if (scope === "own" && !this.options.claimer) return Promise.resolve(0);
    return this.options.store.requeueDeliveries(this.now(), scope === "own" ? this.options.claimer : undefined);
  }

  // The schedule itself is in the source's row (deploy writes its next due time): look at the store again now.
  async scheduleTimer(_timer: TimerJob): Promise<void> {
    this.ticks?.wake();
  }

  async unscheduleTimer(_sourceId: string): Promise<void> {
    this.ticks?.wake();
  }

  // The schedule is the source's row: the queue keeps none of its own.
  async scheduledTimers(): Promise<ScheduledTimer[]> {
    return [];
  }

  async scheduledTimer(_sourceId: string): Promise<ScheduledTimer | null> {
    return null;
  }

  async onTimerTick(handler: (tick: TimerTick) => Promise<void>): Promise<() => Promise<void>> {
    if (this.ticks) throw new Error("This queue runs timer ticks already: one handler per instance.");
    const ticks = new StoreTimerTicks({
      store: this.options.store,
      logger: this.options.logger,
      handler,
      nextTickAfter: this.options.nextTickAfter,
      ...(this.options.now ? { now: this.options.now } : {}),
      ...(this.options.timerPollMs !== undefined ? { pollMs: this.options.timerPollMs } : {}),
    });
    this.ticks = ticks;
    return () => ticks.stop();
  }

  async publish(channel: string, message: LiveMessage): Promise<void> {
    this.options.hub.publish(channel, message);
  }

  async subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>> {
    const unsubscribe = this.options.hub.subscribe(channel, listener);
    return async () => unsubscribe();
  }

  ping(): Promise<void> {
    return this.options.store.ping();
  }

  async close(): Promise<void> {
    await this.renewal.stop();
    await this.ticks?.stop();
  }
}

function fenceOf(job: ClaimedJob): DeliveryKey & { attempts: number } {
  return { listenerId: job.listenerId, emitterId: job.emitterId, eventId: job.eventId, attempts: Number(job.claim) };
}
