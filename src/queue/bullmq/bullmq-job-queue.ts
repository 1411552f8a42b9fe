import { defaultRepeatStrategy, type Job, type JobSchedulerJson, type JobsOptions, type Queue, type Worker } from "bullmq";
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { DeliveryKey } from "../../domain/subscriptions.js";
import type { NewDelivery } from "../../store/store.js";
import { ClaimRenewal } from "../claim-renewal.js";
import { deliveryKeyText, type ClaimedJob, type EnqueueOptions, type JobQueue, type LiveMessage, type QueueStats, type ScheduledTimer, type TimerJob, type TimerTick } from "../job-queue.js";
import { openBullmqBackend, type BullmqBackend, type BullmqTarget } from "./bullmq-backend.js";
import { throttledWarning } from "../throttled-warning.js";
import { skippedDueTimes } from "./tick-catch-up.js";

export interface BullmqJobQueueOptions {
  target: BullmqTarget;
  logger: Logger;
  /**
   * This process's instance id: the jobs it holds show it as their
   * `processedBy`, which is how a process started again with the same id
   * finds what its previous life held (takeBackInterrupted "own").
   */
  claimer?: string | undefined;
  /** How long a claim is this instance's from its last renewal: past it, another worker's stall check takes the job over. Default 30 s. */
  leaseMs?: number;
  /**
   * Whether held claims are renewed (every third of the lease). Default
   * true; false only where a test plays a holder frozen past its lease (a
   * long pause, a partition): its claims are then taken over while it lives.
   */
  renewClaims?: boolean;
  /** How often this instance looks for claims whose lease ran out (BullMQ does it once per interval across instances). Default 15 s. */
  stallCheckMs?: number;
  /** Times a job may be taken over from dead workers before it is given up (failed). Default 10. */
  maxTakeovers?: number;
  /** Timer ticks run at once by this instance. Default 8. */
  tickConcurrency?: number;
  /** How long open() waits for the backend to answer before it gives up. Default 10 s. */
  connectTimeoutMs?: number;
}

const DELIVERIES = "deliveries";
const TIMER_TICKS = "timer-ticks";
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_STALL_CHECK_MS = 15_000;
/** Claim calls in flight at once at most (see claim); on PostgreSQL the claimer's pool has as many connections. */
const CLAIM_WAVE_MAX = 8;
/**
 * Completed jobs are kept two minutes, so that enqueuing the key of one
 * again adds nothing, as for one still waiting: a key comes again only from
 * a relay that finds a row whose hand-off died between queuing it and
 * dropping it, once the row's lease (30 s at most) has run out. Past that
 * the store's run key still records its run once. By age only: BullMQ's
 * PostgreSQL backend keeps a count by scanning every kept job at each
 * completion (10 000 kept cost PostgreSQL about 4 ms of CPU per job).
 */
const KEEP_COMPLETED = { age: 120 };
const KEEP_FAILED = { age: 7 * 86_400 };

/** What a timer tick job carries (its scheduler's template; a catch-up tick the same, its due time in its id). */
interface TickData {
  sourceId: string;
  ownerId: string;
}
/** Ticks kept once run, by count: a catch-up queued again while its first is kept (same job id) adds nothing. */
const KEEP_TICKS = { count: 100 };

/**
 * What a delivery job carries: the delivery as the store would record it
 * (with the attempts and interruptions it had in a job of several, when it
 * was put back from one), or several deliveries queued together.
 */
type DeliveryData = SingleData | TogetherData;
type SingleData = NewDelivery & { attemptsBefore?: number; interruptionsBefore?: number };
interface TogetherData {
  together: NewDelivery[];
}

/**
 * Deliveries queued together (JobQueue.enqueue's `together`) go in jobs of
 * at most this many. Each job costs three of BullMQ's Lua scripts (its add,
 * its claim, its completion: about 65 us of Redis's time each on this
 * machine kind, besides the client's work on both sides), which a job of
 * one delivery pays per run; see docs/scale-out.md.
 */
const TOGETHER_MAX = 64;

/** A delivery job as it is added. */
interface DeliveryJob {
  name: string;
  data: DeliveryData;
  opts: JobsOptions;
}

/** A claimed delivery held by this instance: its job, lock token and lease's end, and for a job of several, its deliveries not settled yet. */
interface HeldJob {
  job: Job<DeliveryData>;
  delivery: NewDelivery;
  token: string;
  until: number;
  unsettled?: Set<string>;
}

/**
 * The adapter on BullMQ 6 (Redis, or PostgreSQL alone). Deliveries are jobs
 * named by their delivery key (those enqueued `together`: one job for
 * several, see TOGETHER_MAX), claimed by hand (Worker.getNextJob) so the
 * engine keeps its own batching; the lock token is the claim, renewed while
 * held (extendLocks, one call for all), and a lock that runs out (its
 * holder died) is taken over by any live instance's stall check. Timer
 * ticks are BullMQ job schedulers, whose one job per due time one worker
 * takes. Live messages go over Redis pub/sub or PostgreSQL NOTIFY.
 */
export class BullmqJobQueue implements JobQueue {
  readonly kind: "redis" | "postgres";
  readonly settlesInStore = false;
  private readonly backend: BullmqBackend;
  private readonly deliveries: Queue;
  private readonly claimer: Worker;
  private readonly timers: Queue;
  private tickWorker: Worker | null = null;
  /** Jobs this instance holds, by delivery key: settled with the Job and the token they were claimed with, renewed until `until`. */
  private readonly held = new Map<string, HeldJob>();
  private readonly renewal: ClaimRenewal;
  readonly onQueuedJobs: JobQueue["onQueuedJobs"];

  private constructor(private readonly options: BullmqJobQueueOptions) {
    this.backend = openBullmqBackend(options.target, options.logger);
    this.kind = this.backend.kind;
    this.deliveries = this.backend.queue(DELIVERIES);
    this.timers = this.backend.queue(TIMER_TICKS);
    this.claimer = this.backend.worker(DELIVERIES, null, CLAIM_WAVE_MAX, {
      autorun: false,
      ...(options.claimer ? { name: options.claimer } : {}),
      lockDuration: options.leaseMs ?? DEFAULT_LEASE_MS,
      stalledInterval: options.stallCheckMs ?? DEFAULT_STALL_CHECK_MS,
      maxStalledCount: options.maxTakeovers ?? 10,
      // Jobs are claimed by hand (getNextJob), which BullMQ's own lock renewal does not cover: renewClaims does it.
      skipLockRenewal: true,
    });
    const { queuedJobs } = this.backend;
    this.onQueuedJobs = queuedJobs ? (listener) => queuedJobs(DELIVERIES, listener) : null;
    this.renewal = new ClaimRenewal({ leaseMs: this.leaseMs, logger: options.logger, renew: () => this.renewClaims() });
    const warn = throttledWarning(options.logger, "queue: BullMQ reported an error");
    this.deliveries.on("error", warn);
    this.timers.on("error", warn);
    this.claimer.on("error", warn);
  }

  /** Opens the queue and waits until its backend answers (a bad or unreachable URL fails here, naming it). */
  static async open(options: BullmqJobQueueOptions): Promise<BullmqJobQueue> {
    const queue = new BullmqJobQueue(options);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      // BullMQ waits for its backend for ever (it reconnects): at start-up, an address that does not answer is a mistake to report.
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      });
      await Promise.race([Promise.all([queue.deliveries.waitUntilReady(), queue.timers.waitUntilReady(), queue.claimer.waitUntilReady()]), timedOut]);
    } catch (error) {
      await withinMs(queue.close(), 2_000);
      const variable = options.target.kind === "redis" ? "REDIS_URL" : "DATABASE_URL";
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`The job queue could not reach ${options.target.kind === "redis" ? "Redis" : "PostgreSQL"} at ${variable} (${reason}). Check ${variable} and that the server is up.`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    // Takes over the jobs of instances that died holding them (their locks ran out).
    queue.claimer.startStalledCheckTimer().catch((error: unknown) => options.logger.error({ err: error }, "queue: the check for jobs of dead workers could not start"));
    return queue;
  }

  async enqueue(deliveries: NewDelivery[], options: EnqueueOptions = {}): Promise<void> {
    if (deliveries.length === 0) return;
    const now = Date.now();
    const dueNow = options.together ? deliveries.filter((delivery) => delivery.availableAt <= now) : [];
    // A job of several for two or more due now; one each for the rest (or for all).
    const together = dueNow.length > 1 ? dueNow : [];
    const apart = together.length > 0 ? deliveries.filter((delivery) => delivery.availableAt > now) : deliveries;
    const jobs = [...chunksOf(together, TOGETHER_MAX).map(togetherJob), ...apart.map((delivery) => singleJob(delivery, now))];
    // One job (the usual hand-off): `add`, since BullMQ's PostgreSQL backend makes two temporary tables for every
    // `addBulk` (about 2.2 ms of PostgreSQL's CPU each here, auto_explain), where its `add` makes none.
    if (jobs.length === 1) await this.deliveries.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
    else await this.deliveries.addBulk(jobs);
  }

  async claim(limit: number): Promise<ClaimedJob[]> {
    const token = `${this.claimer.id}:${randomUUID()}`;
    const claimed: ClaimedJob[] = [];
    // BullMQ takes one job per call, so a claim goes out in waves of calls at once: an idle queue costs one call, a
    // busy one is taken without a round trip per job. The first wave is of one; see nextWave for the others.
    for (let wave = limit > 0 ? 1 : 0; wave > 0; wave = await this.nextWave(wave, limit - claimed.length)) {
      const calls = Array.from({ length: wave }, () => this.claimer.getNextJob(token, { block: false }) as Promise<Job<DeliveryData> | undefined>);
      const answers = await Promise.allSettled(calls);
      let drained = false;
      for (const answer of answers) {
        if (answer.status === "rejected") continue;
        if (!answer.value) drained = true;
        else claimed.push(...this.hold(answer.value, token));
      }
      const failure = answers.find((answer): answer is PromiseRejectedResult => answer.status === "rejected");
      if (failure) {
        // Those taken already are this claim's: answered, not left to stall for a whole lease.
        if (claimed.length === 0) throw failure.reason;
        this.options.logger.warn({ err: failure.reason }, "queue: a claim stopped short; the jobs taken so far are run");
        break;
      }
      if (drained) break;
    }
    if (claimed.length > 0 && this.options.renewClaims !== false) this.renewal.held();
    return claimed;
  }

  /**
   * The size of a claim's next wave, after a wave of `previous` calls that
   * all found a job; 0 ends the claim. On Redis the waves double (1, 2, 4…,
   * up to CLAIM_WAVE_MAX): a call that finds nothing is one script there. On
   * PostgreSQL a call that finds nothing is two PL/pgSQL calls (the claim,
   * then BullMQ's "no job" signal), and the job a claim finds is mostly an
   * api turn's runs alone in the queue: so it asks first how many are ready
   * (one read of two indexes) and makes a wave of that many, none when none
   * are (bench --scale: move_to_active 0.19 -> 0.10 and next_signal
   * 0.10 -> 0.02 a run, session 24). A job added after that read has its
   * wake-up, which arrives after the worker asked, so the next claim takes it.
   */
  private async nextWave(previous: number, left: number): Promise<number> {
    const most = Math.min(CLAIM_WAVE_MAX, left);
    const { readyJobs } = this.backend;
    if (!readyJobs) return Math.min(previous * 2, most);
    if (most <= 0) return 0;
    // Not answered (a connection lost): the wave is claimed as it would have been without asking.
    return readyJobs.count(DELIVERIES, Date.now(), most).catch(() => most);
  }

  /** A job this instance took, as its deliveries: each kept with the job and its token until settled. */
  private hold(job: Job<DeliveryData>, token: string): ClaimedJob[] {
    const until = Date.now() + this.leaseMs;
    const claimedAs = (delivery: NewDelivery, before: { attemptsBefore?: number; interruptionsBefore?: number }): ClaimedJob => ({
      ...delivery,
      status: "running",
      attempts: (before.attemptsBefore ?? 0) + job.attemptsStarted,
      interruptions: (before.interruptionsBefore ?? 0) + job.stalledCounter,
      claim: token,
    });
    if ("together" in job.data) {
      const unsettled = new Set(job.data.together.map((delivery) => deliveryKeyText(delivery)));
      return job.data.together.map((delivery) => {
        this.held.set(deliveryKeyText(delivery), { job, delivery, token, until, unsettled });
        return claimedAs(delivery, {});
      });
    }
    const { attemptsBefore, interruptionsBefore, ...delivery } = job.data;
    this.held.set(deliveryKeyText(delivery), { job, delivery, token, until });
    return [claimedAs(delivery, { attemptsBefore, interruptionsBefore })];
  }

  complete(jobs: ClaimedJob[]): Promise<DeliveryKey[]> {
    return this.settle(jobs, (job, token) => job.moveToCompleted(null, token, false));
  }

  retry(jobs: ClaimedJob[], retryAt: number): Promise<DeliveryKey[]> {
    return this.settle(jobs, (job, token) => job.moveToDelayed(retryAt, token), async (claimed, held) => {
      // One delivery of several goes back alone, as a job of its own that goes on counting its attempts.
      const job = singleJob({ ...held.delivery, availableAt: retryAt, attemptsBefore: claimed.attempts, interruptionsBefore: claimed.interruptions }, Date.now());
      await this.deliveries.add(job.name, job.data, job.opts);
    });
  }

  async hurry(keys: DeliveryKey[]): Promise<number> {
    let count = 0;
    for (const key of keys) {
      const job = await this.deliveries.getJob(deliveryKeyText(key));
      if (!job || !(await job.isDelayed())) continue;
      // Promoted between the two calls by its own due time, the job is waiting already: nothing more to do.
      await job.promote().then(() => (count += 1), () => undefined);
    }
    return count;
  }

  /**
   * "own": the jobs still active under this instance's name (its previous
   * life: the same instance id) go back to wait at once, each counted as one
   * interruption as the stall check would. Each is released with its own
   * lock token, so a job taken over since is left alone. On Redis a job
   * whose lock ran out already has no token left to prove it: the stall
   * check takes it (within its interval). "all": every active job, for a
   * queue no other instance uses.
   */
  async takeBackInterrupted(scope: "own" | "all"): Promise<number> {
    const name = this.options.claimer;
    if (scope === "own" && !name) return 0;
    const active = await this.backend.held.activeJobsOf(DELIVERIES, scope === "own" ? name! : null);
    const mine = new Set([...this.held.values()].map((held) => held.job.id));
    let taken = 0;
    for (const { id, token } of active) {
      if (token === null || mine.has(id)) continue;
      try {
        if (!(await this.backend.held.countInterruption(DELIVERIES, id, token))) continue;
        const job = await this.deliveries.getJob(id);
        if (!job) continue;
        await job.moveToWait(token);
        taken += 1;
      } catch (error) {
        // Settled or taken over meanwhile: nothing of ours to take back.
        this.options.logger.info({ err: error, jobId: id }, "queue: a job of this instance's last run could not be taken back; its lease runs out instead");
      }
    }
    return taken;
  }

  async stats(now: number): Promise<QueueStats> {
    const counts = await this.deliveries.getJobCounts("wait", "prioritized", "delayed", "active");
    const waiting = (counts.wait ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0);
    let oldest: number | null = null;
    if (waiting > 0) {
      // The oldest due job, and the delayed one due first (a retry backing off). The wait list is read newest first
      // (the last one is the oldest): asked in ascending order, BullMQ's PostgreSQL backend answers the newest.
      const last = Math.max(0, (counts.wait ?? 0) - 1);
      const heads = await Promise.all([this.deliveries.getJobs(["wait"], last, last, false), this.deliveries.getJobs(["delayed"], 0, 0, true)]);
      for (const job of heads.flat() as Array<Job<DeliveryData> | undefined>) {
        if (!job) continue;
        const recordedAt = recordedAtOf(job.data) ?? job.timestamp;
        oldest = oldest === null ? recordedAt : Math.min(oldest, recordedAt);
      }
    }
    return { waiting, running: counts.active ?? 0, oldestWaitMs: oldest === null ? 0 : Math.max(0, now - oldest) };
  }

  async scheduleTimer(timer: TimerJob): Promise<void> {
    const { schedule } = timer;
    const repeat =
      schedule.intervalSeconds !== null
        ? // The first tick one interval from now, as the embedded server does (BullMQ would run one at once).
          { every: schedule.intervalSeconds * 1000, startDate: Date.now() + schedule.intervalSeconds * 1000 }
        : { pattern: schedule.cron ?? "", tz: schedule.timezone ?? "UTC" };
    await this.timers.upsertJobScheduler(timer.sourceId, repeat, {
      name: "tick",
      data: { sourceId: timer.sourceId, ownerId: timer.ownerId },
      opts: { removeOnComplete: KEEP_TICKS, removeOnFail: KEEP_TICKS },
    });
  }

  async unscheduleTimer(sourceId: string): Promise<void> {
    await this.timers.removeJobScheduler(sourceId);
  }

  async scheduledTimers(): Promise<ScheduledTimer[]> {
    const timers: ScheduledTimer[] = [];
    const page = 500;
    for (let start = 0; ; start += page) {
      const schedulers = await (this.timers as Queue<Partial<TickData>>).getJobSchedulers(start, start + page - 1, true);
      for (const scheduler of schedulers) {
        const timer = scheduledTimerOf(scheduler.key, scheduler);
        if (timer) timers.push(timer);
      }
      if (schedulers.length < page) return timers;
    }
  }

  async scheduledTimer(sourceId: string): Promise<ScheduledTimer | null> {
    const scheduler = await (this.timers as Queue<Partial<TickData>>).getJobScheduler(sourceId);
    return scheduler ? scheduledTimerOf(sourceId, scheduler) : null;
  }

  async onTimerTick(handler: (tick: TimerTick) => Promise<void>): Promise<() => Promise<void>> {
    if (this.tickWorker) throw new Error("This queue runs timer ticks already: one handler per instance.");
    const tickWorker = this.backend.worker(
      TIMER_TICKS,
      async (job: Job<TickData>) => {
        const dueAt = dueTimeOf(job);
        // Before the handler: what it passed over is queued even if this process dies running it.
        await this.catchUp(job, dueAt).catch((error: unknown) => this.options.logger.warn({ err: error, sourceId: job.data.sourceId }, "timer ticks: the due times a late tick passed over could not be queued"));
        await handler({ sourceId: job.data.sourceId, ownerId: job.data.ownerId, dueAt, ...(job.attemptsStarted > 1 ? { again: true } : {}) });
      },
      1,
      // drainDelay 1 s, not 5: a worker that stops may take with it the wake-up of the next due tick, and the others
      // would then see it only at their next look: a timer a second late at worst, not five. A tick held by a worker
      // that died is run again once its lock runs out: the deliveries' lease, not BullMQ's 30 s, so that a timer
      // the installation shortened its lease for (RUNNEL_DELIVERY_LEASE_SECONDS) gets its tick back as soon.
      { concurrency: this.options.tickConcurrency ?? 8, lockDuration: this.leaseMs, stalledInterval: this.options.stallCheckMs ?? 30_000, maxStalledCount: 1, drainDelay: 1 },
    );
    this.tickWorker = tickWorker;
    tickWorker.on("error", throttledWarning(this.options.logger, "queue: the timer tick worker reported an error"));
    tickWorker.on("failed", (job, error) => this.options.logger.warn({ err: error, sourceId: job?.data.sourceId }, "timer tick failed"));
    await tickWorker.waitUntilReady();
    // BullMQ's close waits for the ticks running; a second close (the queue's own) does nothing more.
    return () => tickWorker.close();
  }

  /**
   * A scheduler's tick taken more than an interval late: BullMQ made its
   * next job at the first due time after now, and the ones between are
   * queued here as ticks of their own (see tick-catch-up.ts). Their job ids
   * are their due times, so a catch-up made twice adds nothing; a due time
   * that has a scheduler's job of its own (its next had moved on by the
   * time this ran) is not one passed over. Only the tick's first run does
   * it: one taken over after its holder died would see the scheduler far
   * ahead, and its holder queued them before running.
   */
  private async catchUp(job: Job<TickData>, dueAt: number): Promise<void> {
    if (job.attemptsStarted > 1 || !job.repeatJobKey) return;
    // Not late by a step yet (its schedule as the job carries it): BullMQ's next is the due time after this one,
    // and the common case costs no read.
    const jobStep = stepOf((job.opts as { repeat?: RepeatShape }).repeat);
    if (jobStep && Date.now() < (jobStep(dueAt) ?? Infinity)) return;
    const schedulerId = job.repeatJobKey;
    const scheduler = await this.timers.getJobScheduler(schedulerId);
    const after = scheduler ? stepOf(scheduler) : null;
    if (!scheduler?.next || !after) return;
    const skipped = skippedDueTimes(dueAt, scheduler.next, after);
    if (skipped.kind === "none") return;
    const { sourceId, ownerId } = job.data;
    if (skipped.kind === "collapsed") {
      this.options.logger.warn({ sourceId, dueAt, missed: `${skipped.atLeast}+` }, "timer ticks: more due times passed than are run late; no worker ran meanwhile, so they run once, as this tick");
      return;
    }
    const scheduled = await Promise.all(skipped.dueTimes.map((dueTime) => this.timers.getJob(`repeat:${schedulerId}:${dueTime}`)));
    const missed = skipped.dueTimes.filter((_, index) => !scheduled[index]);
    if (missed.length === 0) return;
    this.options.logger.info({ sourceId, dueAt, missed: missed.length }, "timer ticks: a tick ran more than an interval late; the due times it passed run now");
    await this.timers.addBulk(
      missed.map((dueTime) => ({
        name: "tick",
        data: { sourceId, ownerId },
        opts: { jobId: catchUpJobId(schedulerId, dueTime), removeOnComplete: KEEP_TICKS, removeOnFail: KEEP_TICKS },
      })),
    );
  }

  publish(channel: string, message: LiveMessage): Promise<void> {
    return this.backend.live.publish(channel, message);
  }

  subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>> {
    return this.backend.live.subscribe(channel, listener);
  }

  async ping(): Promise<void> {
    // One read of the backend: it answers, or this throws.
    await this.deliveries.getWaitingCount();
  }

  async close(): Promise<void> {
    // Jobs still held keep their locks until these run out (one lease after the last renewal): another instance takes them over then.
    await this.renewal.stop();
    this.held.clear();
    await this.tickWorker?.close();
    await this.claimer.close();
    await Promise.all([this.deliveries.close(), this.timers.close()]);
    await this.backend.close();
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /**
   * One renewal of every held claim (extendLocks: one call). A lock BullMQ
   * could not extend is lost (taken over): forgotten, and its settle answers
   * false. When the backend does not answer, what ran out meanwhile is
   * forgotten as lost too. Answers whether any is still held.
   */
  private async renewClaims(): Promise<boolean> {
    if (this.held.size === 0) return false;
    const entries = [...this.held.entries()];
    const now = Date.now();
    let lost: string[];
    try {
      // A job of several is held once per delivery: renewed once.
      const tokens = new Map(entries.map(([, held]) => [held.job.id!, held.token]));
      lost = await this.claimer.extendJobLocks([...tokens.keys()], [...tokens.values()], this.leaseMs);
    } catch (error) {
      for (const [key, held] of entries) if (held.until <= Date.now() && this.held.get(key) === held) this.held.delete(key);
      throw error;
    }
    const lostIds = new Set(lost);
    for (const [key, held] of entries) {
      if (this.held.get(key) !== held) continue; // settled meanwhile
      if (lostIds.has(held.job.id!)) {
        this.held.delete(key);
        this.options.logger.info({ key }, "queue: a held claim was taken over (its lease ran out before it was renewed): it will not be settled here, and the job runs again elsewhere");
      } else held.until = now + this.leaseMs;
    }
    return this.held.size > 0;
  }

  /**
   * Settles each job held under the given claim; a job whose lock was lost
   * (taken over) is left out. A delivery of a job of several is settled
   * alone (`alone`: what its own settling needs, none for a completion),
   * and the job completes with the last of them.
   */
  private async settle(jobs: ClaimedJob[], action: (job: Job, token: string) => Promise<unknown>, alone?: (claimed: ClaimedJob, held: HeldJob) => Promise<void>): Promise<DeliveryKey[]> {
    const settled: DeliveryKey[] = [];
    await Promise.all(
      jobs.map(async (claimed) => {
        const key = deliveryKeyText(claimed);
        const held = this.held.get(key);
        if (!held || held.token !== claimed.claim) return;
        this.held.delete(key);
        try {
          if (held.unsettled) {
            await alone?.(claimed, held);
            held.unsettled.delete(key);
            if (held.unsettled.size === 0) await held.job.moveToCompleted(null, held.token, false);
          } else await action(held.job, held.token);
          settled.push({ listenerId: claimed.listenerId, emitterId: claimed.emitterId, eventId: claimed.eventId });
        } catch (error) {
          // BullMQ refuses a token that no longer holds the job's lock (its lease ran out: it is someone else's now),
          // or the backend did not answer; either way the job comes back when its lock is gone, and its run key
          // keeps a second run from being recorded twice.
          this.options.logger.info({ err: error, key }, "queue: a claim could not be settled (its lease ran out, or the queue did not answer); the job will run again");
        }
      }),
    );
    return settled;
  }
}

/** A job scheduler read back as the schedule scheduleTimer gave it (`every` in ms, or a pattern and its zone). */
function scheduledTimerOf(sourceId: string, scheduler: Pick<JobSchedulerJson<Partial<TickData>>, "every" | "pattern" | "tz" | "template">): ScheduledTimer | null {
  const ownerId = scheduler.template?.data?.ownerId;
  const owner = typeof ownerId === "string" ? { ownerId } : {};
  if (scheduler.every) return { sourceId, ...owner, schedule: { intervalSeconds: Number(scheduler.every) / 1000, cron: null } };
  if (scheduler.pattern) return { sourceId, ...owner, schedule: { intervalSeconds: null, cron: scheduler.pattern, timezone: scheduler.tz ?? "UTC" } };
  return null;
}

/** Waits for `work` at most `ms` (closing what never connected may hang): what is left runs on, unawaited. */
async function withinMs(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * The time a scheduler's job was due. The scheduler names each job by it
 * (`repeat:<scheduler>:<millis>`); the job as a worker reads it has no
 * `prevMillis`, and its `timestamp` is when it was made (the previous
 * tick's run, late on a loaded machine): that made two ticks of one second.
 */
export function dueTimeOf(job: Pick<Job, "id" | "timestamp" | "delay" | "opts">): number {
  const named = /:(\d+)$/.exec(job.id ?? "");
  if (named) return Number(named[1]);
  return job.opts.prevMillis ?? job.timestamp + (job.delay ?? 0);
}

/** What of a schedule a scheduler, or a job it made, carries: `every` in ms, or a cron pattern and its zone. */
type RepeatShape = { every?: number | string | null; pattern?: string | null; tz?: string | null };

/** The due time after a given one on that schedule (BullMQ's own strategy for a pattern); null for neither. */
function stepOf(repeat: RepeatShape | undefined): ((dueTime: number) => number | undefined) | null {
  const every = repeat?.every ? Number(repeat.every) : null;
  if (every) return (dueTime) => dueTime + every;
  const pattern = repeat?.pattern;
  if (!pattern) return null;
  return (dueTime) => defaultRepeatStrategy(dueTime, { pattern, ...(repeat.tz ? { tz: repeat.tz } : {}) });
}

/**
 * A catch-up tick's job id: its scheduler and its due time, last, as a
 * scheduler's own ticks are named, so dueTimeOf reads it the same way (the
 * scheduler id escaped: BullMQ takes a custom id with a colon only in three
 * parts).
 */
function catchUpJobId(schedulerId: string, dueTime: number): string {
  return `catch-up:${encodeURIComponent(schedulerId)}:${dueTime}`;
}

/** A job of one delivery, named by its key: enqueuing a key that exists already (waiting, running, kept completed) adds nothing. */
function singleJob(delivery: SingleData, now: number): DeliveryJob {
  return { name: "delivery", data: delivery, opts: { jobId: deliveryKeyText(delivery), delay: Math.max(0, delivery.availableAt - now), removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_FAILED } };
}

/** A job of several deliveries due now: no key of its own to repeat (see enqueue's `together`), and nothing to keep once done. */
function togetherJob(together: NewDelivery[]): DeliveryJob {
  return { name: "deliveries", data: { together } satisfies TogetherData, opts: { jobId: `together-${randomUUID()}`, removeOnComplete: true, removeOnFail: KEEP_FAILED } };
}

function chunksOf<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** When a job's delivery was recorded (the oldest of several); undefined when its data does not say. */
function recordedAtOf(data: DeliveryData | undefined): number | undefined {
  const times = (data && "together" in data ? data.together : [data]).map((delivery) => delivery?.createdAt).filter((at): at is number => typeof at === "number");
  return times.length > 0 ? Math.min(...times) : undefined;
}
