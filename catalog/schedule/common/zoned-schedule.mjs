// What the cron, daily and weekly sources share. Runnel's timer fires them in their time
// zone: the timer prop carries the schedule and the zone ({ cron, timezone }), so each tick
// is a scheduled time and nothing runs in between. A component cannot set its own timer
// from its other props, so those props (cron, timeOfDay, daysOfWeek, timeZone) are optional
// and the timer's default holds the default schedule: given, they must name the timer's
// schedule (the deploy is refused with the exact timer to set); left out, the timer alone
// is the schedule and the events describe it.
import { cronMatches, parseCron } from "../../common/cron.mjs";
import { assertTimeZone, isoInZone, zonedParts } from "../../common/zoned-time.mjs";

/** The timer prop: Runnel fires the source at the cron's times in the zone. */
export function scheduleTimerProp(defaultCron, example) {
  return {
    type: "$.interface.timer",
    label: "Schedule",
    description:
      `When to emit: a cron expression and the IANA time zone it is read in, such as ${example}. ` +
      "Runnel fires the source at exactly those times, daylight saving time followed. " +
      "If you also set the other props, they must name the same schedule.",
    default: { cron: defaultCron, timezone: "UTC" },
  };
}

export const timeZoneProp = {
  type: "string",
  label: "Time zone",
  description:
    "The IANA time zone of the schedule, such as UTC, Europe/Lisbon or America/New_York; it must be the timer's timezone. " +
    "Leave it out to use the timer's. Daylight saving time is followed: a time that a change skips runs when the clocks have moved on (02:30 runs at 03:00), and a time it repeats runs once.",
  optional: true,
};

/**
 * The timer's schedule, checked: its cron parsed and its zone (UTC without one). Throws a
 * sentence naming the prop "timer" when it is an interval (an interval cannot name times).
 */
export function timerSchedule(timer) {
  if (typeof timer?.cron !== "string") {
    throw new Error('The prop "timer" must be a cron schedule with its time zone, such as { "cron": "0 9 * * *", "timezone": "Europe/Lisbon" }; an interval cannot name times of day.');
  }
  return { cron: parseCron(timer.cron, "timer"), timeZone: timer.timezone ?? "UTC" };
}

/** The zone a `timeZone` prop names, checked (null when it is left out). */
export function propTimeZone(timeZone) {
  if (timeZone === undefined || timeZone === null || timeZone === "") return null;
  assertTimeZone(timeZone, "timeZone");
  return timeZone.trim();
}

const sameSet = (a, b) => a.size === b.size && [...a].every((value) => b.has(value));

/** Whether two parsed cron expressions name the same times ("MON,FRI" and "1,5" do). */
export function sameCron(a, b) {
  return (
    ["seconds", "minutes", "hours", "days", "months", "weekdays"].every((field) => sameSet(a[field], b[field])) &&
    a.daysRestricted === b.daysRestricted &&
    a.weekdaysRestricted === b.weekdaysRestricted
  );
}

/**
 * Throws unless the timer fires on `wanted` (a parsed cron and a zone, from the other
 * props): the message gives the exact timer to set, since the timer is what Runnel fires.
 */
export function assertTimerIs(timer, wanted, what) {
  const actual = timerSchedule(timer);
  if (sameCron(actual.cron, wanted.cron) && actual.timeZone === wanted.timeZone) return actual;
  const timerText = (cron, timeZone) => `{ "cron": ${JSON.stringify(cron)}, "timezone": ${JSON.stringify(timeZone)} }`;
  throw new Error(
    `The prop "timer" is the schedule Runnel fires, and it must match ${what}: set it to ${timerText(wanted.cron.expression, wanted.timeZone)} ` +
      `(it is ${timerText(actual.cron.expression, actual.timeZone)}).`,
  );
}

/**
 * A tick fired by a time zone change rather than on a time the cron names: croner runs a
 * time that a spring-forward change skips at the first instant after the gap.
 */
function atZoneChange(epochMs, timeZone) {
  return zonedParts(epochMs, timeZone).offset !== zonedParts(epochMs - 1000, timeZone).offset;
}

/**
 * Emits the event for a tick of the timer. A run by hand ("run now") gets a timer event for
 * the current second: one that is not a time the schedule names is a sample, marked
 * `manual: true`; an event without a timestamp is one too.
 */
export function emitTick(source, event, schedule, describe) {
  const { cron, timeZone } = schedule;
  const hasTick = typeof event?.timestamp === "number";
  const tickMs = hasTick ? event.timestamp * 1000 : Date.now();
  const manual = !hasTick || (!cronMatches(cron, zonedParts(tickMs, timeZone)) && !atZoneChange(tickMs, timeZone));
  const scheduledTime = isoInZone(tickMs, timeZone);
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
      // A tick claimed twice (never, by the scheduler's design) would still emit once.
      id: manual ? `manual-${tickMs}` : String(tickMs),
      summary: manual ? `Sample tick (run by hand): ${scheduledTime}` : `Scheduled at ${scheduledTime}`,
      ts: tickMs,
    },
  );
}
