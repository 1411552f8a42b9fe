import type { DeliveryQueueStats } from "../domain/processes.js";
import type { TimerSchedule } from "../domain/sources.js";
import type { DeliveryKey } from "../domain/subscriptions.js";
import type { ClaimedDelivery, NewDelivery } from "../store/store.js";

/**
 * The port the engine's work goes through: the durable queue of deliveries
 * (one event for one listener: a workflow's run, a source's run, a
 * webhook's send), the timer ticks of timer sources, and the live messages
 * of SSE streams. Two adapters: `local/` (the embedded server: the store's
 * leased deliveries and claimTick, the in-process EventHub) and `bullmq/`
 * (BullMQ on Redis or on PostgreSQL, for processes on many machines).
 *
 * Guarantees, the same for every adapter (test/queue/conformance.ts):
 * - A job is named by its delivery key (listener, emitter, event): the run
 *   key. Enqueuing a key that is waiting or running adds nothing.
 * - A claim is a lease, renewed while this instance holds it (claimed or
 *   adopted, not yet settled): about every third of the lease, all held
 *   claims in one call. A live holder keeps its job however long the run
 *   takes; a claim whose renewals stop (its process died, or `close()`) is
 *   taken over soon after its lease runs out: a later claim gets the job.
 * - Settling (complete, retry) succeeds only for the claim that still holds
 *   the job; a claim taken over answers false and must not record anything.
 *   Delivery is at least once; the store records a run once by its run key,
 *   so a job run again after a takeover never completes twice.
 * - A timer ticks once per due time across every instance attached.
 * - A live message reaches every subscriber of its channel in every
 *   instance, the publisher's own included, once; none is kept for later.
 */
export interface JobQueue {
  /** Which adapter this is: for logs and `runnel status`. */
  readonly kind: "local" | "redis" | "postgres";
  /**
   * True when a job is the store's delivery row itself (local): the
   * transaction that records a job's run removes it, and `complete` after
   * it finds nothing to do. False (BullMQ): the store has no row of a
   * claimed job, and the engine calls `complete` once the run is recorded.
   */
  readonly settlesInStore: boolean;

  /**
   * Queues deliveries, each due from its `availableAt`; a key already
   * waiting or running is left as it is. `together`: these were never
   * queued before and nothing else will queue them (a caller's own
   * workflow runs, handed over without a store row): the adapter may queue
   * those due now as one job, claimed by one claim and each settled on its
   * own as usual. That gives up the check of a repeated key, which cannot
   * come; a claim of several taken over hands all of them out again (at
   * least once, as always): the engine runs only those whose run was not
   * recorded, and settles the others (RunExecutor.resumeFromRecords).
   */
  enqueue(deliveries: NewDelivery[], options?: EnqueueOptions): Promise<void>;
  /**
   * Takes up to `limit` due deliveries, oldest first, leased to this
   * instance (see the adapter's `leaseMs`). An empty answer: none is due now.
   */
  claim(limit: number): Promise<ClaimedJob[]>;
  /** Removes finished jobs. Returns the keys this claim completed; a job taken over by another claim is not among them. */
  complete(jobs: ClaimedJob[]): Promise<DeliveryKey[]>;
  /** Puts jobs that failed back, due again at `retryAt` (epoch ms). Returns the keys put back by this claim. */
  retry(jobs: ClaimedJob[], retryAt: number): Promise<DeliveryKey[]>;
  /**
   * Jobs waiting for a later due time (a delayed run, one backing off to
   * retry) become due now: a resume URL, or a cancel whose delivery must be
   * settled. Jobs claimed or unknown are left alone. Returns how many were.
   */
  hurry(keys: DeliveryKey[]): Promise<number>;
  /** The queue's depth, read at once: due or backing-off jobs, jobs held by claims (deliveries queued together count as one), and the oldest waiting job's age at `now`. */
  stats(now: number): Promise<QueueStats>;
  /**
   * Claims held by this instance's previous life (or, `all`, by anyone: the
   * embedded server starting alone) become due at once instead of waiting
   * for their leases to run out. Returns how many, when the adapter knows.
   */
  takeBackInterrupted(scope: "own" | "all"): Promise<number>;

  /** A timer source is deployed or its schedule changed: it ticks on `schedule` from now on, once per due time cluster-wide. */
  scheduleTimer(timer: TimerJob): Promise<void>;
  /** A timer source is removed or deactivated: it ticks no more. */
  unscheduleTimer(sourceId: string): Promise<void>;
  /**
   * Runs `handler` for the ticks this instance is given (one handler per
   * instance; an instance without one, an api process, runs none). A
   * handler that throws loses that tick only: the next one comes as planned.
   * The answer stops taking ticks (those due go to other instances) once the
   * running ones are done: a process stopping calls it before its engine.
   */
  onTimerTick(handler: (tick: TimerTick) => Promise<void>): Promise<() => Promise<void>>;
  /**
   * The timers the queue itself keeps (BullMQ's job schedulers), with their
   * schedules: what a start-up compares with the stored sources. The local
   * adapter keeps none (the schedule is the source's row): always empty.
   */
  scheduledTimers(): Promise<ScheduledTimer[]>;
  /** One timer's schedule as the queue keeps it, or null when it has none. */
  scheduledTimer(sourceId: string): Promise<ScheduledTimer | null>;

  /**
   * Present where the queue itself tells every process that jobs became
   * claimable (BullMQ on PostgreSQL NOTIFYs at each add, promotion and
   * stalled job taken back, in the same transaction): calls `listener` each
   * time, until the returned function is called. The engine then sends no
   * wake-up of its own for queued jobs. Null where it does not.
   */
  readonly onQueuedJobs: ((listener: () => void) => Promise<() => Promise<void>>) | null;

  /** Sends a live message to every subscriber of `channel` (an emitter id) in every process. */
  publish(channel: string, message: LiveMessage): Promise<void>;
  /** Listens to `channel` until the returned function is called. */
  subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>>;

  /** Resolves once the backend answers (readiness); throws, saying why, when it does not. */
  ping(): Promise<void>;

  /** Stops renewing, ticking and listening, and lets go of connections. Claims not settled are left to their leases. */
  close(): Promise<void>;
}

/**
 * What live listeners (SSE streams) receive: a new event or log line, or the
 * end of the emitter. The same shape as the engine's EventHub messages (the
 * queue does not import the engine: the engine imports the queue).
 */
export type LiveMessage =
  | { kind: "event"; channel: string; item: unknown }
  | { kind: "log"; item: unknown }
  | { kind: "closed"; reason: string };

export interface EnqueueOptions {
  /** See JobQueue.enqueue. */
  together?: boolean;
}

/** The queue's depth (the same figures for every adapter: /metrics and `GET /v1/status` show them). */
export type QueueStats = DeliveryQueueStats;

/** A delivery as this instance claimed it: the claim it must settle it with travels along. */
export interface ClaimedJob extends ClaimedDelivery {
  /** The adapter's proof of this claim (a lock token, an attempt count). */
  readonly claim: string;
}

/** A timer source's schedule, as the queue keeps it. */
export interface TimerJob {
  sourceId: string;
  ownerId: string;
  schedule: TimerSchedule;
}

/** A timer as the queue keeps it: whose, and on what schedule. */
export interface ScheduledTimer {
  sourceId: string;
  /** The source's owner, when the queue kept it. */
  ownerId?: string;
  schedule: TimerSchedule;
}

/** One tick of a timer source, for its due time. */
export interface TimerTick {
  sourceId: string;
  ownerId: string;
  /** The time the tick was due (epoch ms): the timer's event carries it, and it names the tick. */
  dueAt: number;
  /** Taken over from a worker that died holding it: that worker may have recorded its run. */
  again?: boolean;
}

/** The key of a delivery as one string (for maps and job ids). */
export function deliveryKeyText(key: DeliveryKey): string {
  return `${key.listenerId}/${key.emitterId}/${key.eventId}`;
}
