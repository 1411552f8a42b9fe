import { parseCron } from "../../../common/cron.mjs";
import { assertTimerIs, emitTick, propTimeZone, scheduleTimerProp, timeZoneProp, timerSchedule } from "../../common/zoned-schedule.mjs";

export default {
  key: "schedule-cron-scheduler",
  name: "Cron schedule",
  description: "Emits an event at the times a cron expression names, read in the time zone you choose (daylight saving time followed).",
  version: "0.2.0",
  type: "source",
  dedupe: "unique",
  props: {
    cron: {
      type: "string",
      label: "Cron expression",
      description:
        'Minute, hour, day of month, month, day of week, such as "0 9 * * 1-5" (9:00 on weekdays); a first field for seconds if you need them. ' +
        "Leave it out to use the timer's; given, the timer must have the same schedule.",
      optional: true,
    },
    timeZone: timeZoneProp,
    timer: scheduleTimerProp("0 0 * * *", '{ "cron": "0 9 * * 1-5", "timezone": "America/New_York" } (9:00 on weekdays in New York)'),
  },
  methods: {
    /** The schedule: the timer's, checked against the props that are given. Throws a sentence naming the prop at fault. */
    schedule() {
      const cron = this.cron != null ? parseCron(this.cron, "cron") : null;
      const zone = propTimeZone(this.timeZone);
      const timer = timerSchedule(this.timer);
      const wanted = { cron: cron ?? timer.cron, timeZone: zone ?? timer.timeZone };
      return assertTimerIs(this.timer, wanted, `the schedule "${wanted.cron.expression}" in ${wanted.timeZone} (props "cron" and "timeZone")`);
    },
  },
  hooks: {
    async activate() {
      this.schedule();
    },
  },
  async run(event) {
    const schedule = this.schedule();
    // The expression as the user wrote it (normalized spaces): the prop's when given, else the timer's.
    emitTick(this, event, schedule, { cron: this.cron != null ? parseCron(this.cron, "cron").expression : schedule.cron.expression });
  },
};
