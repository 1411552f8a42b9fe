import type { Logger } from "pino";
import type { DeliveryKey } from "../../domain/subscriptions.js";
import type { JobQueue } from "../../queue/job-queue.js";
import type { ClaimedDelivery, Store } from "../../store/store.js";
import type { DeliveryHandOff } from "../sources/result-writer.js";
import { jobOf } from "./delivery-relay.js";

export interface QueueHandOffOptions {
  store: Pick<Store, "dropDeliveries" | "enqueueDeliveries">;
  /** The shared queue (BullMQ): a job's id is its delivery key, so enqueuing one twice adds nothing. */
  queue: Pick<JobQueue, "enqueue">;
  logger: Logger;
  /** This process's instance id, recorded with the rows it holds until their jobs are queued. */
  claimer: string | null;
  /** How long those rows are this process's: past it (it died before queuing them) the relay queues them. */
  leaseMs: number;
  /** Jobs were queued: wake the workers that claim them, here and in other processes. */
  onQueued: () => void;
  /** Deliveries were left in the store for the relay (the queue did not take them): wake it. */
  onLeftInStore: () => void;
  /** A delivery was recorded pending, due at `at` (a rate limit's start time): the relay may look then. */
  onDueAt?: (at: number) => void;
  now?: () => number;
}

/**
 * The append's hand-off when the job queue is shared (BullMQ): an event's
 * deliveries go onto the queue as soon as the append has committed, from
 * the process that appended them, instead of waiting as rows for a relay
 * to claim, queue and delete them (a claim, a hop and a wake-up less per
 * event). The append records the rows leased to this process (durable with
 * the event), or none for a caller's own workflow (EventBatch.held: the
 * caller is answered only by that run, which needs the job queued first);
 * once the jobs are queued the rows are dropped. If the queue does not take
 * them, the rows stay for the relay (those handed over without one get one
 * now), and if this process dies in between, the relay queues them when
 * their lease ends; the job id makes a second enqueue a no-op.
 *
 * The deliveries of one turn of the event loop go in one enqueue and one
 * drop: under load an api process appends many times a millisecond.
 */
export class QueueHandOff implements DeliveryHandOff {
  private pending: ClaimedDelivery[] = [];
  private flushing: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly options: QueueHandOffOptions) {
    this.now = options.now ?? Date.now;
  }

  claimFor(): { claimer: string | null; leaseMs: number } | null {
    return this.stopped ? null : { claimer: this.options.claimer, leaseMs: this.options.leaseMs };
  }

  take(claimed: ClaimedDelivery[]): void {
    if (claimed.length === 0) return;
    this.pending.push(...claimed);
    this.flushing ??= this.scheduleFlush();
  }

  dueAt(at: number): void {
    this.options.onDueAt?.(at);
  }

  /** Takes no more hand-offs, and waits for those taken to be queued (or left to the relay). */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.flushing || this.inFlight.size > 0) await Promise.all([this.flushing, ...this.inFlight]);
  }

  private async scheduleFlush(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const batch = this.pending;
    this.pending = [];
    this.flushing = null;
    const carried = this.carry(batch).finally(() => this.inFlight.delete(carried));
    this.inFlight.add(carried);
  }

  private async carry(deliveries: ClaimedDelivery[]): Promise<void> {
    const { queue } = this.options;
    const now = this.now();
    // A caller's own workflow runs (no row) were never queued and nothing else queues them: one job for them all.
    const unrecorded = deliveries.filter((delivery) => delivery.unrecorded);
    const recorded = deliveries.filter((delivery) => !delivery.unrecorded);
    const [together, apart] = await Promise.allSettled([
      unrecorded.length > 0 ? queue.enqueue(unrecorded.map((delivery) => jobOf(delivery, now)), { together: true }) : undefined,
      recorded.length > 0 ? queue.enqueue(recorded.map((delivery) => jobOf(delivery, now))) : undefined,
    ]);
    const failed = [together, apart].find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    if (failed) this.options.logger.warn({ err: failed.reason, deliveries: deliveries.length }, "the job queue did not take new deliveries; the relay queues them from the store");
    await Promise.all([together.status === "rejected" ? this.recordPending(unrecorded, now) : undefined, apart.status === "fulfilled" ? this.dropRows(recorded) : undefined]);
    const queuedSome = (together.status === "fulfilled" && unrecorded.length > 0) || (apart.status === "fulfilled" && recorded.length > 0);
    if (queuedSome) this.options.onQueued();
    if (failed) this.options.onLeftInStore();
  }

  /** Deliveries handed over without a row that the queue did not take: pending rows now, which the relay takes at its next look. */
  private async recordPending(unrecorded: ClaimedDelivery[], now: number): Promise<void> {
    try {
      await this.options.store.enqueueDeliveries(unrecorded.map((delivery) => jobOf(delivery, now)));
    } catch (recordError) {
      this.options.logger.error({ err: recordError, deliveries: unrecorded.length }, "deliveries could not be queued nor recorded; their callers get no answer and may send again");
    }
  }

  /** Rows of deliveries queued now: dropped. (The recorded ones the queue did not take wait for their lease: this process's until then.) */
  private async dropRows(recorded: DeliveryKey[]): Promise<void> {
    if (recorded.length === 0) return;
    // Queued already: a row left behind is queued again by the relay after its lease, and its job id adds nothing.
    await this.options.store.dropDeliveries(recorded).catch((error: unknown) => this.options.logger.warn({ err: error, deliveries: recorded.length }, "queued deliveries' rows could not be removed; the relay will find their jobs queued already"));
  }
}
