// What the cron, daily and weekly sources share: the platform's timer ticks every minute
// (or second), and each tick is checked against the schedule in the chosen time zone.
// The platform's own cron runs in the server's zone, so the zone is handled here.
import { cronMatches, parseCron } from "../../common/cron.mjs";
import { assertTimeZone, isoInZone, zonedParts } from "../../common/zoned-time.mjs";

const EVERY_SECOND = "* * * * * *";
const EVERY_MINUTE = "* * * * *";

export const checkTimerProp = {
  type: "$.interface.timer",
  label: "Check every",
  description:
    "How often Runnel checks whether a scheduled time has come. Leave it at every minute (exact to the minute). " +
    `Only a schedule with seconds needs every second: { "cron": "${EVERY_SECOND}" }.`,
  default: { cron: EVERY_MINUTE },
};

export const timeZoneProp = {
  type: "string",
  label: "Time zone",
  description: "The IANA time zone the schedule is read in, such as UTC, Europe/Lisbon or America/New_York. Daylight saving time is followed: a time that a change skips does not run that day, and one it repeats runs twice.",
  default: "UTC",
  optional: true,
};

/** The schedule, checked: throws a sentence naming the prop at fault (a hook that throws stops the deploy with it). */
export function checkedSchedule(cronExpression, timeZone, cronPropName) {
  const cron = parseCron(cronExpression, cronPropName);
  assertTimeZone(timeZone ?? "UTC", "timeZone");
  return cron;
}

const normalizeCron = (cron) => (typeof cron === "string" ? cron.trim().split(/\s+/).join(" ") : null);

/**
 * Throws a sentence naming the prop "timer" when it checks too seldom for the schedule:
 * a schedule exact to the minute needs a check at least every minute, one with seconds
 * every second. (The timer prop's configured value: { intervalSeconds } or { cron }.)
 */
export function assertTimerFits(timer, cron) {
  const interval = typeof timer?.intervalSeconds === "number" ? timer.intervalSeconds : null;
  const timerCron = normalizeCron(timer?.cron);
  if (cron.hasSeconds) {
    if (interval === 1 || timerCron === EVERY_SECOND) return;
    throw new Error(`The schedule "${cron.expression}" names seconds, so the prop "timer" must check every second: set it to { "cron": "${EVERY_SECOND}" }.`);
  }
  if ((interval !== null && interval <= 60) || timerCron === EVERY_MINUTE || timerCron === EVERY_SECOND) return;
  const now = interval !== null ? `every ${interval} s` : `on "${timerCron}"`;
  throw new Error(`The prop "timer" checks the schedule ${now}, so scheduled times would be missed. Leave it at its default, every minute ({ "cron": "${EVERY_MINUTE}" }).`);
}

/**
 * A run by hand ("run now") gets a timer event for the current second. With the timer at
 * its every-minute default, a real tick is always due on a whole minute, so a timestamp
 * inside a minute can only be a run by hand; an event without a timestamp is one too.
 */
function isRunByHand(event) {
  if (typeof event?.timestamp !== "number") return true;
  const minuteCron = typeof event.cron === "string" && event.cron.trim().split(/\s+/).length === 5;
  return minuteCron && event.timestamp % 60 !== 0;
}

/**
 * Emits one event when the timer's tick falls on the schedule. The tick's own time
 * (`event.timestamp`, when it was due) is what is checked, so a tick that runs a little
 * late still counts. A run by hand emits a sample tick for now, whatever the schedule.
 */
export function emitIfScheduled(source, event, cron, timeZone, describe) {
  const manual = isRunByHand(event);
  const tickMs = typeof event?.timestamp === "number" ? event.timestamp * 1000 : Date.now();
  // A schedule without seconds is exact to the minute: a tick anywhere in the minute stands for the minute.
  const scheduledMs = cron.hasSeconds || manual ? Math.floor(tickMs / 1000) * 1000 : Math.floor(tickMs / 60_000) * 60_000;
  if (!manual && !cronMatches(cron, zonedParts(scheduledMs, timeZone))) return false;
  const scheduledTime = isoInZone(scheduledMs, timeZone);
  source.$emit(
    {
      timestamp: Math.floor(tickMs / 1000),
      iso: new Date(tickMs).toISOString(),
      scheduled_time: scheduledTime,
      time_zone: timeZone,
      ...describe,
      ...(manual ? { manual: true } : {}),
    },
    {
      // A minute checked by several ticks (a timer every second) emits once.
      id: manual ? `manual-${tickMs}` : String(scheduledMs),
      summary: manual ? `Sample tick (run by hand): ${scheduledTime}` : `Scheduled at ${scheduledTime}`,
      ts: scheduledMs,
    },
  );
  return true;
}
