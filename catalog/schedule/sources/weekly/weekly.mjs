import { parseCron } from "../../../common/cron.mjs";
import { cronAt, parseTimeOfDay, timeOfDayOf } from "../../common/time-of-day.mjs";
import { assertTimerIs, emitTick, propTimeZone, scheduleTimerProp, timeZoneProp, timerSchedule } from "../../common/zoned-schedule.mjs";

const DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

export default {
  key: "schedule-weekly",
  name: "Every week on a day at a time",
  description: "Emits an event every week on the days and at the time of day you choose, in your time zone.",
  version: "0.2.0",
  type: "source",
  dedupe: "unique",
  props: {
    daysOfWeek: {
      type: "string[]",
      label: "Days of the week",
      description: "One or more days, such as monday. Leave it out to use the timer's days; given, the timer must fire on them.",
      options: DAYS.map((day) => ({ label: day[0].toUpperCase() + day.slice(1), value: day })),
      optional: true,
    },
    timeOfDay: {
      type: "string",
      label: "Time of day",
      description: "24-hour time, such as 09:00 or 17:30. Leave it out to use the timer's time; given, the timer must fire at it.",
      optional: true,
    },
    timeZone: timeZoneProp,
    timer: scheduleTimerProp("0 9 * * 1", '{ "cron": "0 9 * * 1,5", "timezone": "America/New_York" } (09:00 on Mondays and Fridays in New York)'),
  },
  methods: {
    /** The days the prop lists, in its order (null when it is left out). */
    days() {
      if (this.daysOfWeek == null) return null;
      const days = Array.isArray(this.daysOfWeek) ? this.daysOfWeek.map((day) => String(day).trim().toLowerCase()) : [];
      const unknown = days.find((day) => !DAYS.includes(day));
      if (days.length === 0 || unknown !== undefined) {
        throw new Error(`Prop "daysOfWeek" must list days by name (${DAYS.join(", ")})${unknown !== undefined ? `; "${unknown}" is not one` : ""}.`);
      }
      return [...new Set(days)];
    },
    /** The schedule: the timer's, checked against the props that are given. Throws a sentence naming the prop at fault. */
    schedule() {
      const days = this.days();
      const time = this.timeOfDay != null ? parseTimeOfDay(this.timeOfDay, "timeOfDay") : null;
      const zone = propTimeZone(this.timeZone);
      const timer = timerSchedule(this.timer);
      const timerTime = timeOfDayOf(timer.cron);
      if (timerTime === null && (time === null || days === null)) {
        throw new Error(`The prop "timer" of a weekly schedule fires once on each of its days, such as { "cron": "0 9 * * 1,5", "timezone": "America/New_York" }; "${timer.cron.expression}" is not a single time of day. Use schedule-cron-scheduler for other schedules.`);
      }
      const weekdays = (days ?? this.timerDays(timer.cron)).map((day) => DAYS.indexOf(day)).sort((a, b) => a - b).join(",");
      const at = time ?? parseTimeOfDay(timerTime, "timer");
      const wanted = { cron: parseCron(cronAt(at, weekdays), days ? "daysOfWeek" : "timeOfDay"), timeZone: zone ?? timer.timeZone };
      const what = `${(days ?? this.timerDays(timer.cron)).join(", ")} at ${time ? this.timeOfDay.trim() : timerTime} in ${wanted.timeZone} (props "daysOfWeek", "timeOfDay" and "timeZone")`;
      return assertTimerIs(this.timer, wanted, what);
    },
    /** The days a parsed cron fires on, Sunday first. */
    timerDays(cron) {
      return DAYS.filter((_, index) => cron.weekdays.has(index));
    },
  },
  hooks: {
    async activate() {
      this.schedule();
    },
  },
  async run(event) {
    const schedule = this.schedule();
    emitTick(this, event, schedule, {
      days_of_week: this.days() ?? this.timerDays(schedule.cron),
      time_of_day: this.timeOfDay != null ? this.timeOfDay.trim() : timeOfDayOf(schedule.cron),
    });
  },
};
