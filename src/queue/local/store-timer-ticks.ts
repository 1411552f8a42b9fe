import type { Logger } from "pino";
import type { TimerSchedule } from "../../domain/sources.js";
import type { Store } from "../../store/store.js";
import type { TimerTick } from "../job-queue.js";

/** Timers read from the store at once when this many are due (more: read again at once). */
const DUE_BATCH = 100;

export interface StoreTimerTicksOptions {
  store: Store;
  logger: Logger;
  handler: (tick: TimerTick) => Promise<void>;
  /** When the tick after `previousDue` is (see LocalJobQueueOptions). */
  nextTickAfter: (schedule: TimerSchedule, previousDue: number, now: number) => number;
  now?: () => number;
  /** Longest sleep between looks at the store, so ticks set by other processes are seen. Default 5 s. */
  pollMs?: number;
}

/**
 * The embedded server's timer ticks, kept in the store with the sources
 * (their next due time): each due tick is claimed with a compare-and-set of
 * that time before it runs, so it runs once across restarts and across
 * processes sharing the database, and a tick missed while the server was
 * down runs once on start. (The same loop as TimerScheduler, handing the
 * tick to a handler instead of running the source itself.)
 */
export class StoreTimerTicks {
  private timer: NodeJS.Timeout | null = null;
  private reading = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly now: () => number;
  private readonly pollMs: number;

  constructor(private readonly options: StoreTimerTicksOptions) {
    this.now = options.now ?? Date.now;
    this.pollMs = options.pollMs ?? 5_000;
    this.wake();
  }

  /** Looks at the store now (a timer was deployed, changed or removed). */
  wake(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.read(), 0);
  }

  /** Stops ticking and waits for the ticks already running. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.inFlight]);
  }

  private async read(): Promise<void> {
    if (this.reading || this.stopped) return;
    this.reading = true;
    try {
      const due = await this.options.store.dueTimers(this.now(), DUE_BATCH);
      for (const timer of due) this.fire(timer.id, timer.ownerId, timer.nextTickAt);
      this.sleepUntil(due.length === DUE_BATCH ? this.now() : await this.options.store.nextTimerDueAt());
    } catch (error) {
      this.options.logger.error({ err: error }, "timer ticks: could not read due timers; trying again in a second");
      this.sleepUntil(this.now() + 1_000);
    } finally {
      this.reading = false;
    }
  }

  private sleepUntil(nextDue: number | null): void {
    if (this.stopped) return;
    const wait = nextDue === null ? this.pollMs : Math.min(Math.max(nextDue - this.now(), 0), this.pollMs);
    this.timer = setTimeout(() => void this.read(), wait);
    this.timer.unref();
  }

  private fire(sourceId: string, ownerId: string, dueAt: number): void {
    const work = (async () => {
      const source = await this.options.store.findSource(ownerId, sourceId);
      if (!source?.timer || !source.active) return;
      const next = this.options.nextTickAfter(source.timer, dueAt, this.now());
      if (!(await this.options.store.claimTick(sourceId, dueAt, next))) return; // another process has it
      await this.options.handler({ sourceId, ownerId, dueAt });
    })().catch((error: unknown) => this.options.logger.error({ err: error, sourceId }, "timer tick failed"));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}
