import type { Logger } from "pino";
import type { JobQueue } from "../../queue/job-queue.js";
import type { ClaimedDelivery, NewDelivery, Store } from "../../store/store.js";
import { WakeSignal } from "../wake-signal.js";
import { DueTimes } from "./due-times.js";

export interface DeliveryRelayOptions {
  store: Store;
  /** The shared queue the deliveries go to (BullMQ): its job id is the delivery key. */
  queue: Pick<JobQueue, "enqueue">;
  logger: Logger;
  /** This process's instance id, recorded with the rows it holds while it relays them. */
  claimer?: string | undefined;
  /** Told after deliveries were queued: wake the workers that claim them (here and in other processes). */
  onRelayed?: () => void;
  /** How long a row is this relay's before another may take it (this process died mid-relay). Default 30 s. */
  leaseMs?: number;
  /** How often the store is looked at when nothing woke the relay. Default 1 s. */
  pollMs?: number;
  /** Rows relayed at once. Default 256. */
  batchSize?: number;
  now?: () => number;
}

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_BATCH = 256;

/**
 * Carries deliveries from the store to a shared queue (BullMQ), on worker
 * processes. An append records its deliveries as rows in the event's own
 * transaction, so an acknowledged event's runs are as durable as the event;
 * the relay claims those rows, enqueues each as a job named by its delivery
 * key, and only then removes the rows. A relay that dies between the two
 * leaves the rows leased: they are relayed again when the lease ends, and
 * the job id, taken already, adds nothing (no run twice).
 */
export class DeliveryRelay {
  private readonly now: () => number;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private readonly signal = new WakeSignal();
  /** When deliveries recorded pending for later fall due (a rate limit's start times), as this process learnt them. */
  private readonly dueTimes = new DueTimes();
  private lastLookAt = 0;

  constructor(private readonly options: DeliveryRelayOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Deliveries were appended (here or in another process): relay them now, not at the next poll. */
  wake(): void {
    this.signal.wake();
  }

  /** A delivery was recorded pending, due at `at`: when idle, look then rather than at the next poll. */
  dueAt(at: number): void {
    this.dueTimes.add(at);
    this.signal.interrupt();
  }

  /** Stops after the batch in hand is relayed (or left leased, for another relay). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.signal.interrupt();
    await this.loop;
  }

  private async run(): Promise<void> {
    const limit = this.options.batchSize ?? DEFAULT_BATCH;
    while (!this.stopped) {
      this.signal.clear();
      let relayed = 0;
      try {
        relayed = await this.relayOnce(limit);
      } catch (error) {
        if (this.stopped) break;
        this.options.logger.error({ err: error }, "could not relay deliveries to the job queue; trying again shortly");
      }
      // A full batch: there may be more at once. Otherwise wait for news, the poll, or the next due time known here
      // (one ms past it: a look at the due time itself may find the row not due yet).
      if (relayed < limit && !this.signal.pending && !this.stopped) {
        const pollMs = this.options.pollMs ?? 1_000;
        const due = this.dueTimes.next(this.lastLookAt);
        await this.signal.sleep(due === null ? pollMs : Math.min(pollMs, Math.max(0, due - this.now() + 1)));
      }
    }
  }

  /** Relays one batch; answers how many rows it took. */
  async relayOnce(limit: number): Promise<number> {
    const { store, queue } = this.options;
    this.lastLookAt = this.now();
    const claimed = await store.claimDeliveries({ now: this.lastLookAt, leaseMs: this.options.leaseMs ?? DEFAULT_LEASE_MS, limit, claimer: this.options.claimer });
    if (claimed.length === 0) return 0;
    const now = this.now();
    await queue.enqueue(claimed.map((row) => jobOf(row, now)));
    await store.dropDeliveries(claimed);
    this.options.onRelayed?.();
    // Rows that were running (their process died, their lease ran out): a one-at-a-time line's chain they headed is
    // lost; its followers wait again, and are sent when the line's gate was removed meanwhile (they are relayed next).
    const takenOver = claimed.filter((row) => row.interruptions > 0);
    if (takenOver.length > 0 && (await store.releaseChainsOf(takenOver, now)) > 0) this.signal.wake();
    return claimed.length;
  }
}

/**
 * The job of a claimed delivery: due now (it was due, or it would not have
 * been claimed; the claim wrote its lease over `availableAt`), without the
 * claim's fields: the queue keeps its own attempts.
 */
export function jobOf(row: ClaimedDelivery, now: number): NewDelivery {
  return {
    listenerId: row.listenerId,
    emitterId: row.emitterId,
    eventId: row.eventId,
    ownerId: row.ownerId,
    subscriptionId: row.subscriptionId,
    channel: row.channel,
    availableAt: now,
    createdAt: row.createdAt,
    event: row.event,
    indexedAtMs: row.indexedAtMs,
  };
}
