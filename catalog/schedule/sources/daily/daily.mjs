import { parseCron } from "../../../common/cron.mjs";
import { cronAt, parseTimeOfDay, timeOfDayOf } from "../../common/time-of-day.mjs";
import { assertTimerIs, emitTick, propTimeZone, scheduleTimerProp, timeZoneProp, timerSchedule } from "../../common/zoned-schedule.mjs";

export default {
  key: "schedule-daily",
  name: "Every day at a time",
  description: "Emits an event once a day at the time of day you choose, in your time zone.",
  version: "0.2.0",
  type: "source",
  dedupe: "unique",
  props: {
    timeOfDay: {
      type: "string",
      label: "Time of day",
      description: "24-hour time, such as 09:00 or 17:30. Leave it out to use the timer's time; given, the timer must fire at it.",
      optional: true,
    },
    timeZone: timeZoneProp,
    timer: scheduleTimerProp("0 9 * * *", '{ "cron": "30 9 * * *", "timezone": "Europe/Paris" } (09:30 in Paris)'),
  },
  methods: {
    /** The schedule: the timer's, checked against the props that are given. Throws a sentence naming the prop at fault. */
    schedule() {
      const time = this.timeOfDay != null ? parseTimeOfDay(this.timeOfDay, "timeOfDay") : null;
      const zone = propTimeZone(this.timeZone);
      const timer = timerSchedule(this.timer);
      if (time === null && timeOfDayOf(timer.cron) === null) {
        throw new Error(`The prop "timer" of a daily schedule fires once a day, such as { "cron": "30 9 * * *", "timezone": "Europe/Paris" }; "${timer.cron.expression}" is not a single time of day. Use schedule-cron-scheduler for other schedules.`);
      }
      const wanted = { cron: time ? parseCron(cronAt(time), "timeOfDay") : timer.cron, timeZone: zone ?? timer.timeZone };
      const what = `the time of day ${time ? this.timeOfDay.trim() : timeOfDayOf(timer.cron)} in ${wanted.timeZone} (props "timeOfDay" and "timeZone")`;
      return assertTimerIs(this.timer, wanted, what);
    },
  },
  hooks: {
    async activate() {
      this.schedule();
    },
  },
  async run(event) {
    const schedule = this.schedule();
    emitTick(this, event, schedule, { time_of_day: this.timeOfDay != null ? this.timeOfDay.trim() : timeOfDayOf(schedule.cron) });
  },
};
