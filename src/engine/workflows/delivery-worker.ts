import type { Logger } from "pino";
import type { DeployedSource } from "../../domain/sources.js";
import type { Workflow } from "../../domain/workflows.js";
import { gateOf } from "../../domain/run-gate.js";
import type { ClaimedJob, JobQueue } from "../../queue/job-queue.js";
import type { ClaimedDelivery, Store } from "../../store/store.js";
import { ExpiringCache } from "../expiring-cache.js";
import type { DeliveryHandOff } from "../sources/result-writer.js";
import type { RunExecutor } from "./run-executor.js";
import { WakeSignal } from "../wake-signal.js";
import { DueTimes } from "./due-times.js";
import { deliveriesToGiveUp } from "./give-up.js";
import { jobOf } from "./delivery-relay.js";
import { ChurningMap, ChurningSet } from "../../domain/churning-map.js";

/**
 * A kind of listener other than a workflow: it carries out one listener's
 * claimed deliveries, or throws for a retry (PartlyDone: of those not done).
 * It may answer some deliveries it tried and will try again at `retryAt`
 * (a webhook's receiver failed); it has recorded that in the store, which
 * is all a queue that settles in the store needs.
 */
export interface GroupListener {
  run(deliveries: ClaimedDelivery[]): Promise<void | ListenerRetry>;
}

/** Deliveries a listener tried and will try again at `retryAt` (epoch ms). */
export interface ListenerRetry {
  deliveries: ClaimedDelivery[];
  retryAt: number;
}

/** A group listener's failure after some of its deliveries were done (committed): only the others are tried again. */
export class PartlyDone extends Error {
  constructor(
    readonly done: ClaimedDelivery[],
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/**
 * What the worker takes deliveries through: the job queue's deliveries, and
 * `adopt` when the queue can take over claims an append made for this
 * process (the local adapter: the embedded hand-off; without it, appends
 * hand nothing over and every delivery is claimed from the queue).
 */
export type DeliveryQueue = Pick<JobQueue, "settlesInStore" | "enqueue" | "claim" | "complete" | "retry" | "takeBackInterrupted" | "hurry"> & Partial<Pick<JobQueue, "onQueuedJobs">> & {
  adopt?(claimed: ClaimedDelivery[]): ClaimedJob[];
};

export interface DeliveryWorkerOptions {
  store: Store;
  /** Where deliveries are claimed and settled (see DeliveryQueue). */
  queue: DeliveryQueue;
  executor: RunExecutor;
  /** Listeners that are not workflows, by id prefix: sources (`dc_`), webhooks (`wh_`). */
  listeners?: Partial<Record<"dc_" | "wh_", GroupListener>>;
  logger: Logger;
  /** How often the store is asked when nothing woke the worker (other processes' work, expired leases). Default 1 s. */
  pollMs?: number;
  /** How long a delivery handed over at append time is ours before another claimer may take it (its process died). Default 30 s (the local queue renews it while the run goes on); the queue's own claims have the queue's lease. */
  leaseMs?: number;
  /** This process's instance id, recorded with the leases of hand-offs (see Store.requeueDeliveries). */
  claimer?: string;
  /** Deliveries a gate admitted were recorded pending: wake whoever claims them (the relay, with a shared queue). */
  onGateAdmitted?: () => void;
  /**
   * With a shared queue (BullMQ): the store's own rows as a queue (the local
   * adapter over the same store, its leases this process's and renewed while
   * held), for the deliveries a gate admits in this process's transactions
   * (takeAdmitted). Settled through it; put back for later through the
   * shared queue.
   */
  rowQueue?: Pick<DeliveryQueue, "complete" | "takeBackInterrupted"> & { adopt(claimed: ClaimedDelivery[]): ClaimedJob[] };
  /** Deliveries claimed at once. Default 64. */
  batchSize?: number;
  /**
   * Batches running at once, all owners together. Default 32: a batch whose
   * steps wait on an API costs the server nothing while it waits, and the
   * sandbox's pool bounds the runners that compute.
   */
  concurrency?: number;
  /**
   * Batches of one owner running at once. Default 4: an owner whose runs all
   * wait (a slow API, a step that sleeps) holds this many slots and no more,
   * and the other owners' runs go on.
   */
  perOwner?: number;
  now?: () => number;
}

/** Batches running at once, all owners together, and of one owner, by default (see the options). */
const DEFAULT_CONCURRENCY = 32;
const DEFAULT_PER_OWNER = 4;
/** How long a claimed delivery is this process's before another may take it (its process died), by default. */
const DEFAULT_LEASE_MS = 30_000;
/** Webhook groups sent at once, beside the workflow and source runs (see startGroup). */
const WEBHOOK_SLOTS = 16;
/** Workflows and sources are re-read at most this often while busy; changes, here or in another process ("changed" messages), clear them at once. */
const CACHE_MS = 1_000;

/**
 * Takes deliveries from the job queue and runs them: claims a batch
 * (leased), groups it by listener, and hands each group to the executor,
 * which records the runs. With the local queue the same transaction
 * removes the deliveries; with BullMQ the jobs are completed after it (a
 * run recorded once by its run key makes a repeat harmless). A process
 * killed mid-run leaves its claims leased; the embedded server takes them
 * back on start, a cluster when the lease expires.
 */
export class DeliveryWorker implements DeliveryHandOff {
  private readonly workflows = new ExpiringCache<string, Workflow | null>({ ttlMs: CACHE_MS, maxEntries: 10_000 });
  private readonly sources = new ExpiringCache<string, DeployedSource | null>({ ttlMs: CACHE_MS, maxEntries: 10_000 });
  private readonly running = new ChurningSet<Promise<void>>();
  /** Batches running, by owner (see perOwner). */
  private readonly runningByOwner = new ChurningMap<string, number>();
  private readonly now: () => number;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private readonly signal = new WakeSignal();
  /** When deliveries this process put back fall due: an idle loop wakes then, not at its next poll. */
  private readonly dueTimes = new DueTimes();
  /** When the loop last asked the queue for deliveries (the queue's clock). */
  private lastClaimAt = 0;
  /** The last claim took all there was: claim again only when told of more (wake) or at the poll. */
  private drained = false;
  /** Deliveries recorded claimed for this process (take) or claimed while their owner had no free slot, by listener, waiting for a slot. */
  private handedOff: ClaimedJob[][] = [];
  /** Claims of rowQueue's (takeAdmitted), not of the shared queue's. */
  private readonly rowClaims = new WeakSet<ClaimedJob>();
  /** Webhook groups being sent, and those waiting for a sending slot (see startGroup). */
  private readonly sending = new ChurningSet<Promise<void>>();
  private readonly waitingToSend: ClaimedJob[][] = [];

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Starts taking deliveries. `requeue`: "all", every leased one is ours to
   * run again (the embedded server starting); "own", those this instance
   * held before it stopped (a process of a shared database starting again).
   */
  async start({ requeue }: { requeue: "all" | "own" | false }): Promise<void> {
    if (requeue) {
      let count = await this.options.queue.takeBackInterrupted(requeue);
      // Rows this instance held for admitted runs (rowQueue) are pending again: the relay queues them at once.
      if (this.options.rowQueue && requeue === "own") count += await this.options.rowQueue.takeBackInterrupted("own");
      if (count > 0) this.options.logger.info({ count }, "runs interrupted by the last stop are run again");
    }
    this.loop ??= this.run();
  }

  /** New deliveries may be waiting: look now rather than at the next poll. */
  wake(): void {
    this.signal.wake();
  }

  /**
   * Deliveries the append recorded already claimed for this process: run
   * them as a claim's, without asking the store (ResultWriter's handOff).
   */
  take(handed: ClaimedDelivery[]): void {
    const claimed = this.options.queue.adopt?.(handed);
    if (!claimed) {
      // A queue that takes no hand-offs (claimFor said so): queued like any append's.
      void this.options.queue.enqueue(handed).catch((error) => this.options.logger.error({ err: error }, "could not queue handed-over deliveries"));
      return;
    }
    if (this.stopped) {
      // Not ours to run any more: back to the queue, for the next start or another process.
      void this.giveBack(claimed, this.now()).catch((error) => this.options.logger.error({ err: error }, "could not give back deliveries at stop"));
      return;
    }
    for (const group of groupBy(claimed, (delivery) => delivery.listenerId).values()) this.handedOff.push(group);
    this.signal.interrupt();
  }

  /**
   * Deliveries a gate admitted in this process (the run that freed their
   * slot was recorded here), recorded claimed for it (the executor's
   * hand-off, create-engine's `admissions`): with a shared queue, run here as the store's rows, without
   * the trip through it (its addBulk, the wake, the claim: about 4 ms of a
   * one-at-a-time line's 11 on BullMQ). False when this worker does not
   * take them (no rowQueue, not running): the caller queues them.
   */
  takeAdmitted(rows: ClaimedDelivery[]): boolean {
    const rowQueue = this.options.rowQueue;
    if (!rowQueue || !this.loop || this.stopped) return false;
    const claimed = rowQueue.adopt(rows);
    for (const job of claimed) {
      this.rowClaims.add(job);
      // Removed by the transaction that records its run (one statement there, not a transaction of its own after).
      job.storeRow = "held";
    }
    for (const group of groupBy(claimed, (delivery) => delivery.listenerId).values()) this.handedOff.push(group);
    this.signal.interrupt();
    return true;
  }

  /** A delivery was recorded pending, due at `at` (a rate limit's start time): when idle, claim then, not at the next poll. */
  dueAt(at: number): void {
    this.dueTimes.add(at);
    // An idle sleep ends, and the next one is measured to the earliest due time.
    this.signal.interrupt();
  }

  /** The claim an append records deliveries with, to hand them here; null until the worker runs, and once it stops. */
  claimFor(): { claimer: string | null; leaseMs: number } | null {
    return this.loop && !this.stopped && this.options.queue.adopt ? { claimer: this.options.claimer ?? null, leaseMs: this.leaseMs } : null;
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** Deliveries this process holds, waiting for a free slot of their owner (the process registry's load). */
  queuedCount(): number {
    let count = 0;
    for (const group of this.handedOff) count += group.length;
    for (const group of this.waitingToSend) count += group.length;
    return count;
  }

  /** A workflow or source changed, here or in another process: forget what was cached of it. */
  forget(id: string): void {
    this.workflows.delete(id);
    this.sources.delete(id);
  }

  /** Stops claiming and waits for the batches in flight to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.signal.interrupt();
    await this.loop;
    await Promise.all(this.running);
    await Promise.all(this.sending);
  }

  private async run(): Promise<void> {
    const concurrency = this.options.concurrency ?? DEFAULT_CONCURRENCY;
    while (!this.stopped) {
      if (this.running.size >= concurrency) {
        await Promise.race(this.running);
        continue;
      }
      const handed = this.nextHandedOff();
      if (handed) {
        this.startGroup(handed);
        continue;
      }
      // A short claim took all there was (or what waits is of owners with no free slot): wait for news, or for a
      // batch to end, rather than ask the store again for nothing.
      if (this.drained && !this.signal.pending) {
        await this.idle();
        continue;
      }
      this.signal.clear();
      this.lastClaimAt = this.now();
      let claimed: ClaimedJob[];
      try {
        claimed = await this.options.queue.claim(this.options.batchSize ?? 64);
      } catch (error) {
        if (this.stopped) break;
        this.options.logger.error({ err: error }, "could not claim deliveries; trying again shortly");
        await this.idle();
        continue;
      }
      this.drained = claimed.length < (this.options.batchSize ?? 64);
      for (const group of groupBy(claimed, (delivery) => delivery.listenerId).values()) {
        // An owner with all its slots taken: its group waits with the handed-off ones (its lease holds meanwhile).
        if (isWebhookGroup(group) || this.hasRoom(group[0]!.ownerId)) this.startGroup(group);
        else this.handedOff.push(group);
      }
    }
    // Webhook groups that never got a sending slot go back to the queue too.
    const unsent = this.waitingToSend.splice(0).flat();
    if (unsent.length > 0) await this.giveBack(unsent, this.now()).catch((error) => this.options.logger.error({ err: error }, "could not give back deliveries at stop"));
    // Handed-off deliveries that never started go back to the queue.
    const left = this.handedOff.splice(0).flat();
    if (left.length > 0) await this.giveBack(left, this.now()).catch((error) => this.options.logger.error({ err: error }, "could not give back deliveries at stop"));
  }

  /**
   * The oldest group handed off, with every later one of the same listener
   * (up to a claim's size): while all slots were busy, appends kept handing
   * small groups over, and one batch of their runs costs the runner and the
   * store about what one small group does.
   */
  private nextHandedOff(): ClaimedJob[] | undefined {
    // The oldest of an owner with a free slot: one owner's waiting runs never hold up another's.
    const at = this.handedOff.findIndex((group) => this.hasRoom(group[0]!.ownerId));
    if (at < 0) return undefined;
    const [first] = this.handedOff.splice(at, 1) as [ClaimedJob[]];
    const limit = this.options.batchSize ?? 64;
    const listenerId = first[0]!.listenerId;
    const merged = [...first];
    this.handedOff = this.handedOff.filter((group) => {
      if (group[0]!.listenerId !== listenerId || merged.length + group.length > limit) return true;
      merged.push(...group);
      return false;
    });
    return merged;
  }

  /**
   * Workflow runs and source runs take the worker's slots. A webhook's sends
   * wait on a receiver that may hang for its whole timeout, so webhook groups
   * have slots of their own (WEBHOOK_SLOTS): a dead receiver, or many, never
   * holds up anyone's runs.
   */
  private startGroup(group: ClaimedJob[]): void {
    if (!isWebhookGroup(group)) return this.track(group[0]!.ownerId, this.runGroup(group));
    if (this.sending.size >= WEBHOOK_SLOTS) {
      this.waitingToSend.push(group);
      return;
    }
    const sent: Promise<void> = this.runGroup(group).finally(() => {
      this.sending.delete(sent);
      const next = this.stopped ? undefined : this.waitingToSend.shift();
      if (next) this.startGroup(next);
    });
    this.sending.add(sent);
  }

  /**
   * A finished batch frees a slot; the loop, when it waited for one, claims
   * again by itself. It is not woken: new deliveries wake it as they are
   * recorded, and a wake per finished batch was a claim that mostly found
   * nothing (two of every three claims, under load).
   */
  private track(ownerId: string, task: Promise<void>): void {
    this.runningByOwner.set(ownerId, (this.runningByOwner.get(ownerId) ?? 0) + 1);
    const tracked = task.finally(() => {
      this.running.delete(tracked);
      const left = (this.runningByOwner.get(ownerId) ?? 1) - 1;
      if (left > 0) this.runningByOwner.set(ownerId, left);
      else this.runningByOwner.delete(ownerId);
      // This owner's groups that waited for a slot of theirs may start now.
      if (this.handedOff.some((group) => group[0]!.ownerId === ownerId)) this.signal.interrupt();
    });
    this.running.add(tracked);
  }

  /** Whether the owner may start another batch (perOwner). */
  private hasRoom(ownerId: string): boolean {
    return (this.runningByOwner.get(ownerId) ?? 0) < (this.options.perOwner ?? DEFAULT_PER_OWNER);
  }

  /**
   * Waits for a wake, a hand-off, a delivery this process put back falling
   * due, or the poll interval (after which the store is asked again: other
   * processes' work, expired leases).
   */
  private async idle(): Promise<void> {
    const pollMs = this.options.pollMs ?? 1_000;
    // Due since the last claim (it fell due while this worker was busy): claim now.
    const due = this.dueTimes.next(this.lastClaimAt);
    const now = this.now();
    // One ms past the due time: a claim at the due time itself may find the delivery not due yet.
    const sleepMs = due === null ? pollMs : Math.min(pollMs, Math.max(0, due - now + 1));
    if (sleepMs === 0 || (await this.signal.sleep(sleepMs))) this.drained = false;
  }

  private async runGroup(deliveries: ClaimedJob[]): Promise<void> {
    const { queue, executor, logger } = this.options;
    const first = deliveries[0]!;
    // Deliveries run (or not to be run) and recorded: a queue that does not settle in the store is told after.
    let finished: ClaimedJob[] = deliveries;
    try {
      const other = this.listenerOf(first.listenerId);
      if (other) {
        const retry = await other.run(deliveries);
        if (retry && !queue.settlesInStore) {
          const again = new Set(retry.deliveries);
          finished = deliveries.filter((delivery) => !again.has(delivery));
          await queue.retry(deliveries.filter((delivery) => again.has(delivery)), retry.retryAt);
        }
      } else {
        const workflow = await this.workflowOf(first.ownerId, first.listenerId);
        // Deleted or deactivated: what it was sent is not run (a paused workflow does not pile up work).
        if (!workflow || !workflow.active) {
          executor.forgetFollowers(deliveries);
          await this.complete(deliveries);
          // Held slots of a gated workflow's line are freed (its next events are dropped the same way while it is paused).
          if (workflow && gateOf(workflow.settings)) await this.releaseGateSlots(workflow.id, deliveries);
          return;
        }
        let made = 0;
        const retries: Array<{ delivery: ClaimedDelivery; at: number }> = [];
        const recordedBefore: ClaimedDelivery[] = [];
        for (const [kind, group] of await this.byTriggerKind(deliveries)) {
          const outcome = await executor.runBatch(workflow, group, kind);
          made += outcome.made;
          retries.push(...outcome.retries);
          recordedBefore.push(...outcome.recordedBefore);
        }
        // Runs recorded before, not run again: no commit settled their deliveries in the store this time.
        if (recordedBefore.length > 0 && queue.settlesInStore) await this.complete(deliveries.filter((delivery) => recordedBefore.includes(delivery)));
        // Its runs emitted to listeners ($errors, $.send.emit): their runs are waiting.
        if (made > 0) this.wake();
        if (retries.length > 0) finished = await this.retryLater(deliveries, retries);
      }
    } catch (error) {
      const done = error instanceof PartlyDone ? new Set(error.done) : null;
      const failed = done ? deliveries.filter((delivery) => !done.has(delivery)) : deliveries;
      const given = await deliveriesToGiveUp(failed, (ownerId, workflowId, keys) => this.options.store.findRunsByKey(ownerId, workflowId, keys));
      const retry = failed.filter((delivery) => !given.includes(delivery));
      logger.error({ err: error, listenerId: first.listenerId, deliveries: failed.length, givenUp: given.length }, "runs could not be recorded; they will be tried again");
      finished = done ? deliveries.filter((delivery) => done.has(delivery)) : [];
      await this.complete(given).catch(() => undefined);
      if (given.length > 0) await this.releaseGateSlots(first.listenerId, given);
      const backoff = Math.min(60_000, 1_000 * 2 ** Math.min(6, first.attempts));
      await this.giveBack(retry, this.now() + backoff).catch(() => undefined);
    }
    if (queue.settlesInStore || finished.length === 0) return;
    // Recorded already: a job not completed now (the queue did not answer) runs again, and its run key records nothing twice.
    await this.complete(finished).catch((error) => logger.warn({ err: error, listenerId: first.listenerId }, "finished jobs could not be marked complete; they will run again and be recorded once"));
  }

  /**
   * Runs recorded waiting to retry a step: their deliveries go back to the
   * queue, due at the retry's time (in both modes through the queue port:
   * the local queue's row, BullMQ's delayed job). Answers the deliveries
   * that are finished. A process that dies before this leaves them leased:
   * taken over, they resume at once rather than after the backoff.
   */
  private async retryLater(deliveries: ClaimedJob[], retries: Array<{ delivery: ClaimedDelivery; at: number }>): Promise<ClaimedJob[]> {
    const waiting = new Set<ClaimedDelivery>(retries.map((retry) => retry.delivery));
    for (const [at, group] of groupBy(retries, (retry) => retry.at)) {
      const jobs = deliveries.filter((delivery) => group.some((retry) => retry.delivery === delivery));
      // A line's follower that waits (ClaimedDelivery.followers): not claimed with the batch, its delivery recorded for it by its run's record.
      const followers = group.filter((retry) => !deliveries.includes(retry.delivery as ClaimedJob)).map((retry) => retry.delivery);
      if (followers.length > 0) jobs.push(...this.adoptFollowers(followers));
      await this.giveBack(jobs, at).catch((error) => this.options.logger.error({ err: error, count: jobs.length }, "runs waiting to retry could not be put back in the queue; they run again when their lease ends"));
    }
    return deliveries.filter((delivery) => !waiting.has(delivery));
  }

  /**
   * A line's followers that wait (a retry, a delay): their deliveries were
   * recorded for them, leased to this process, by their runs' record; they
   * are put back as claims of the queue that holds such rows (the local
   * queue's own, or rowQueue's beside a shared queue, as takeAdmitted's).
   */
  private adoptFollowers(followers: ClaimedDelivery[]): ClaimedJob[] {
    const { queue, rowQueue } = this.options;
    if (queue.adopt) return queue.adopt(followers);
    if (!rowQueue) return [];
    const claimed = rowQueue.adopt(followers);
    for (const job of claimed) {
      this.rowClaims.add(job);
      job.storeRow = "held";
    }
    return claimed;
  }

  /**
   * Deliveries this process will not run now go back to the queue, due at
   * `availableAt`; those handed over unrecorded (EventBatch.held) are
   * recorded now, so that they are run later all the same.
   */
  private async giveBack(deliveries: ClaimedJob[], availableAt: number): Promise<void> {
    // A line's head going back unrun: its followers are left to its later record (they wait again then).
    this.options.executor.forgetFollowers(deliveries);
    const { rows, others } = this.byClaim(deliveries);
    const unrecorded = others.filter((delivery) => delivery.unrecorded).map((delivery) => ({ ...delivery, availableAt }));
    const recorded = others.filter((delivery) => !delivery.unrecorded);
    if (availableAt > this.now()) this.dueTimes.add(availableAt);
    await Promise.all([
      recorded.length > 0 ? this.options.queue.retry(recorded, availableAt) : undefined,
      unrecorded.length > 0 ? this.options.queue.enqueue(unrecorded) : undefined,
      rows.length > 0 ? this.rowsToQueue(rows, availableAt) : undefined,
    ]);
  }

  /**
   * Rows of admitted runs (rowQueue) that wait (a retry, a delay) or were not
   * run: onto the shared queue, due at `availableAt`, then their rows go. A
   * process that dies between the two leaves the row leased: the relay
   * queues it once the lease ends, and the job's id adds nothing twice.
   */
  private async rowsToQueue(rows: ClaimedJob[], availableAt: number): Promise<void> {
    await this.options.queue.enqueue(rows.map((row) => jobOf(row, availableAt)));
    await this.options.rowQueue!.complete(rows);
  }

  /** Claims of rowQueue's (takeAdmitted) apart from the shared queue's. */
  private byClaim(jobs: ClaimedJob[]): { rows: ClaimedJob[]; others: ClaimedJob[] } {
    const rows: ClaimedJob[] = [];
    const others: ClaimedJob[] = [];
    for (const job of jobs) (this.rowClaims.has(job) ? rows : others).push(job);
    return { rows, others };
  }

  /** Finished deliveries settled with the queue that holds their claim (a row its run's record removed: nothing). */
  private async complete(jobs: ClaimedJob[]): Promise<void> {
    const { rows: claimedRows, others } = this.byClaim(jobs);
    const rows = claimedRows.filter((row) => row.storeRow !== "removed");
    await Promise.all([others.length > 0 ? this.options.queue.complete(others) : undefined, rows.length > 0 ? this.options.rowQueue!.complete(rows) : undefined]);
  }

  /** Deliveries of a workflow that end without a run: a gate's slots they held go to the next in line (nothing for others). */
  private async releaseGateSlots(workflowId: string, deliveries: ClaimedJob[]): Promise<void> {
    if (!workflowId.startsWith("p_")) return;
    try {
      const admitted = await this.options.store.releaseGateSlots(workflowId, deliveries.map(({ emitterId, eventId }) => ({ emitterId, eventId })), this.now());
      if (admitted > 0) this.options.onGateAdmitted?.();
    } catch (error) {
      this.options.logger.error({ err: error, workflowId }, "slots of the workflow's gate could not be freed; its waiting events wait until a run of it ends");
    }
  }

  /** The listener of a source or webhook id; null for a workflow's. */
  private listenerOf(listenerId: string): GroupListener | null {
    const prefix = listenerId.startsWith("dc_") ? "dc_" : listenerId.startsWith("wh_") ? "wh_" : null;
    return prefix ? (this.options.listeners?.[prefix] ?? null) : null;
  }

  private async workflowOf(ownerId: string, workflowId: string): Promise<Workflow | null> {
    const cached = this.workflows.get(workflowId);
    if (cached !== undefined && (cached === null || cached.ownerId === ownerId)) return cached;
    return this.workflows.readThrough(workflowId, () => this.options.store.findWorkflow(ownerId, workflowId));
  }

  /** The deliveries by the kind of source they came from (HTTP, timer, other): it sets their time limit and source type. */
  private async byTriggerKind(deliveries: ClaimedJob[]): Promise<Map<TriggerKind, ClaimedJob[]>> {
    const kinds = new Map<string, TriggerKind>();
    for (const { emitterId, ownerId } of deliveries) {
      if (kinds.has(emitterId)) continue;
      let source = emitterId.startsWith("dc_") ? this.sources.get(emitterId) : null;
      if (source === undefined) source = await this.sources.readThrough(emitterId, () => this.options.store.findSource(ownerId, emitterId));
      kinds.set(emitterId, source?.endpointToken ? "http" : source?.timer ? "timer" : "other");
    }
    return groupBy(deliveries, (delivery) => kinds.get(delivery.emitterId)!);
  }
}

type TriggerKind = "http" | "timer" | "other";

/** A webhook's group: sent in slots of its own, not the runs' (see startGroup). */
function isWebhookGroup(group: ClaimedJob[]): boolean {
  return group[0]!.listenerId.startsWith("wh_");
}

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
