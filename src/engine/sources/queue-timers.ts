import type { Logger } from "pino";
import type { TimerSchedule } from "../../domain/sources.js";
import type { JobQueue, TimerTick } from "../../queue/job-queue.js";
import type { Store } from "../../store/store.js";
import type { SourceInvoker } from "./invoker.js";
import { timerEvent } from "./timer-schedule.js";

/** What of the shared queue timers need. */
export type TimerQueue = Pick<JobQueue, "scheduleTimer" | "unscheduleTimer" | "onTimerTick" | "scheduledTimers" | "scheduledTimer">;

export interface QueueTimersOptions {
  store: Store;
  invoker: SourceInvoker;
  queue: TimerQueue;
  logger: Logger;
}

/** Sources read back at start-up; an installation with more active timers reconciles these first (logged). */
const RECONCILE_LIMIT = 10_000;
/** Times a sync reads the source again after a concurrent change moved it under it. */
const SYNC_ROUNDS = 3;

/**
 * Timer sources on a shared queue (RUNNEL_QUEUE=redis|postgres): each timer
 * is one of the queue's job schedulers, which hands each due time to one
 * worker of the installation. The store's claimTick path (TimerScheduler)
 * is not used at all then, so a tick never runs by both mechanisms.
 *
 * The schedule follows the source's row: `sync` makes the queue's schedule
 * what the row says (active with a timer: scheduled; else: none). It writes
 * only when they differ, because scheduling again restarts the interval
 * from now (a rename must not shift the ticks), and reads the row again
 * after writing: a change landing meanwhile in another process is then
 * applied too, whichever write came last.
 */
export class QueueTimers {
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopTicks: (() => Promise<void>) | null = null;

  constructor(private readonly options: QueueTimersOptions) {}

  /** Worker processes: runs the ticks the queue hands this process. */
  async runTicks(): Promise<void> {
    this.stopTicks = await this.options.queue.onTimerTick((tick) => this.track(this.fire(tick)));
  }

  /** The row of a source changed (deploy, update, activation, delete): its schedule on the queue follows. */
  async sync(ownerId: string, sourceId: string): Promise<void> {
    for (let round = 0; round < SYNC_ROUNDS; round += 1) {
      const wanted = await this.wantedSchedule(ownerId, sourceId);
      const held = (await this.options.queue.scheduledTimer(sourceId))?.schedule ?? null;
      if (sameSchedule(wanted, held)) return;
      if (wanted) await this.options.queue.scheduleTimer({ sourceId, ownerId, schedule: wanted });
      else await this.options.queue.unscheduleTimer(sourceId);
    }
  }

  /**
   * At start: active timer sources without a schedule on the queue get one
   * (deployed before the queue was shared, or their schedule was lost), and
   * schedules of sources gone or inactive are removed. Schedules already
   * right are left alone: scheduling again would restart their intervals.
   * The queue is listed before the store is read, so a schedule seen here
   * belongs to a row this read sees (a deploy writes its row first). One
   * process of the installation at a time (workers start together): two
   * that both found a source unscheduled would both schedule it, and
   * BullMQ's PostgreSQL backend then ran its first due time twice.
   */
  reconcile(): Promise<{ changed: number }> {
    return this.options.store.exclusively("runnel:timers:reconcile", () => this.reconcileNow());
  }

  private async reconcileNow(): Promise<{ changed: number }> {
    const held = new Map((await this.options.queue.scheduledTimers()).map((timer) => [timer.sourceId, timer]));
    const active = await this.options.store.dueTimers(Number.MAX_SAFE_INTEGER, RECONCILE_LIMIT);
    const complete = active.length < RECONCILE_LIMIT;
    if (!complete) this.options.logger.warn({ limit: RECONCILE_LIMIT }, "timers: more active timer sources than one start-up reconciles; the others keep the schedules they have");
    let changed = 0;
    for (const timer of active) {
      const source = await this.options.store.findSource(timer.ownerId, timer.id);
      if (!source?.timer || !source.active || sameSchedule(source.timer, held.get(timer.id)?.schedule ?? null)) continue;
      await this.sync(timer.ownerId, timer.id);
      changed += 1;
    }
    if (!complete) return { changed };
    const activeIds = new Set(active.map((timer) => timer.id));
    for (const timer of held.values()) {
      if (activeIds.has(timer.sourceId)) continue;
      // Through sync, which reads the row again after removing: an activation landing meanwhile gets its schedule back.
      if (timer.ownerId) await this.sync(timer.ownerId, timer.sourceId);
      else await this.options.queue.unscheduleTimer(timer.sourceId);
      changed += 1;
    }
    return { changed };
  }

  /** Takes no more ticks (other workers take those due) and waits for the ones this process is running. */
  async stop(): Promise<void> {
    await this.stopTicks?.().catch((error: unknown) => this.options.logger.warn({ err: error }, "timers: the job queue's tick worker did not close cleanly"));
    this.stopTicks = null;
    await Promise.allSettled([...this.inFlight]);
  }

  private async wantedSchedule(ownerId: string, sourceId: string): Promise<TimerSchedule | null> {
    const source = await this.options.store.findSource(ownerId, sourceId);
    return source?.active && source.timer ? source.timer : null;
  }

  /**
   * As TimerScheduler fires a claimed tick: the same event, logs and errors.
   * The tick's due time is recorded with its events (EventBatch.ticks): a
   * tick taken over from a worker that died after recording it is not run
   * again, and one that comes twice at once appends its events once.
   */
  private async fire(tick: TimerTick): Promise<void> {
    const { sourceId, ownerId, dueAt } = tick;
    try {
      if (tick.again && (await this.options.store.timerTickRecorded(sourceId, dueAt))) {
        this.options.logger.info({ sourceId, dueAt }, "timers: a tick taken over from a worker that died had been run and recorded by it; not run again");
        return;
      }
      const source = await this.options.store.findSource(ownerId, sourceId);
      if (!source) {
        // Deleted, and its schedule outlived it (the delete's unschedule failed): no more ticks for nothing.
        await this.options.queue.unscheduleTimer(sourceId);
        return;
      }
      if (!source.timer || !source.active) return;
      const result = await this.options.invoker.invoke(source, { kind: "run", event: timerEvent(source.timer, dueAt) }, "timer", { tickDueAt: dueAt });
      if (!result.ok) this.options.logger.info({ sourceId, code: result.error?.code }, "timer run failed; see the source's logs");
    } catch (error) {
      this.options.logger.error({ err: error, sourceId }, "timer tick failed");
    }
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return work;
  }
}

/** Whether two schedules tick alike (a cron without a zone runs in UTC). */
function sameSchedule(a: TimerSchedule | null, b: TimerSchedule | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.intervalSeconds !== null || b.intervalSeconds !== null) return a.intervalSeconds === b.intervalSeconds;
  return a.cron === b.cron && (a.timezone ?? "UTC") === (b.timezone ?? "UTC");
}
