import { Cron } from "croner";
import { explainCronProblem } from "../../domain/cron-expression.js";
import { ValidationError } from "../../domain/errors.js";
import type { TimerSchedule } from "../../domain/sources.js";

/** The schedule a configured timer prop value stands for. */
export function toTimerSchedule(value: unknown): TimerSchedule | null {
  if (!value || typeof value !== "object") return null;
  const config = value as { intervalSeconds?: unknown; cron?: unknown; timezone?: unknown };
  if (typeof config.intervalSeconds === "number") return { intervalSeconds: config.intervalSeconds, cron: null };
  // The zone only when there is one: a schedule stored before zones existed compares equal to the same one without.
  const zone = typeof config.timezone === "string" ? { timezone: config.timezone } : {};
  if (typeof config.cron === "string") return { intervalSeconds: null, cron: config.cron, ...zone };
  return null;
}

/** Checks a cron expression with the same parser that schedules it; the error names the prop, and the cron field at fault and where it is. */
export function assertValidCron(cron: string, field: string): void {
  const problem = explainCronProblem(cron);
  if (problem !== null) throw new ValidationError(field, `${field}: ${problem}`);
}

/**
 * When the tick after `previousDue` is. Ticks missed while the server was down
 * are not replayed one by one: the next one is counted from now, so a long
 * stop costs one catch-up tick, not a burst.
 */
export function nextTickAfter(schedule: TimerSchedule, previousDue: number, now: number): number {
  if (schedule.intervalSeconds !== null) {
    const step = schedule.intervalSeconds * 1000;
    const next = previousDue + step;
    return next > now ? next : now + step;
  }
  const from = new Date(Math.max(previousDue, now));
  const next = cronOf(schedule).nextRun(from);
  if (!next) throw new Error(`The cron expression "${schedule.cron}" has no next run.`);
  return next.getTime();
}

/**
 * The schedule's cron, read in its zone (UTC without one): croner follows the
 * zone's daylight saving changes, so "30 9 * * *" in Europe/Paris is 07:30 UTC
 * in summer and 08:30 UTC in winter; a time a change skips does not run that
 * day, and one it repeats runs once.
 */
export function cronOf(schedule: TimerSchedule): Cron {
  return new Cron(schedule.cron ?? "", { paused: true, timezone: schedule.timezone ?? "UTC" });
}

/** The first tick of a newly deployed or activated timer. */
export function firstTick(schedule: TimerSchedule, now: number): number {
  if (schedule.intervalSeconds !== null) return now + schedule.intervalSeconds * 1000;
  return nextTickAfter(schedule, now, now);
}

/** The event a timer gives `run`: the tick time in epoch seconds and the timer's configuration (its zone when it has one). */
export function timerEvent(schedule: TimerSchedule, dueAt: number): Record<string, unknown> {
  const timestamp = Math.floor(dueAt / 1000);
  if (schedule.intervalSeconds !== null) return { timestamp, interval_seconds: schedule.intervalSeconds };
  return { timestamp, cron: schedule.cron, ...(schedule.timezone !== undefined ? { timezone: schedule.timezone } : {}) };
}
