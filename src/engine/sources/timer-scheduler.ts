import type { Logger } from "pino";
import type { Store } from "../../store/store.js";
import type { SourceInvoker } from "./invoker.js";
import { nextTickAfter, timerEvent } from "./timer-schedule.js";

export interface TimerSchedulerOptions {
  store: Store;
  invoker: SourceInvoker;
  logger: Logger;
  now?: () => number;
  /** Longest sleep between looks at the store, so ticks set by other processes are seen. */
  pollMs?: number;
}

/**
 * Fires timer ticks. Each tick is claimed in the store with a compare-and-set
 * of its due time before it runs, so across restarts and across several
 * processes a tick runs once: never twice, and a tick missed while the server
 * was down runs once on start.
 */
export class TimerScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private stopped = true;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly now: () => number;
  private readonly pollMs: number;

  constructor(private readonly options: TimerSchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.pollMs = options.pollMs ?? 5_000;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks at the store now (a timer was deployed, changed or removed). */
  wake(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), 0);
  }

  /** Stops scheduling and waits for the ticks already running. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.inFlight]);
  }

  private async tick(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      const due = await this.options.store.dueTimers(this.now(), 100);
      for (const timer of due) this.fire(timer.id, timer.ownerId, timer.nextTickAt);
      const nextDue = due.length === 100 ? this.now() : await this.options.store.nextTimerDueAt();
      this.schedule(nextDue);
    } catch (error) {
      this.options.logger.error({ err: error }, "timer scheduler: could not read due timers; retrying");
      this.schedule(this.now() + 1_000);
    } finally {
      this.running = false;
    }
  }

  private schedule(nextDue: number | null): void {
    if (this.stopped) return;
    const wait = nextDue === null ? this.pollMs : Math.min(Math.max(nextDue - this.now(), 0), this.pollMs);
    this.timer = setTimeout(() => void this.tick(), wait);
    this.timer.unref();
  }

  private fire(sourceId: string, ownerId: string, dueAt: number): void {
    const work = (async () => {
      const source = await this.options.store.findSource(ownerId, sourceId);
      if (!source?.timer || !source.active) return;
      const next = nextTickAfter(source.timer, dueAt, this.now());
      if (!(await this.options.store.claimTick(sourceId, dueAt, next))) return; // another process has it
      const result = await this.options.invoker.invoke(source, { kind: "run", event: timerEvent(source.timer, dueAt) }, "timer");
      if (!result.ok) this.options.logger.info({ sourceId, code: result.error?.code }, "timer run failed; see the source's logs");
    })().catch((error: unknown) => this.options.logger.error({ err: error, sourceId }, "timer tick failed"));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}
