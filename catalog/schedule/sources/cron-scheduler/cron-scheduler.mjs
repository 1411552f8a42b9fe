import { assertTimerFits, checkedSchedule, checkTimerProp, emitIfScheduled, timeZoneProp } from "../../common/zoned-schedule.mjs";

export default {
  key: "schedule-cron-scheduler",
  name: "Cron schedule",
  description: "Emits an event at the times a cron expression names, read in the time zone you choose (daylight saving time followed).",
  version: "0.1.0",
  type: "source",
  dedupe: "unique",
  props: {
    cron: {
      type: "string",
      label: "Cron expression",
      description:
        'Minute, hour, day of month, month, day of week, such as "0 9 * * 1-5" (9:00 on weekdays). Add a first field for seconds if you need them.',
    },
    timeZone: timeZoneProp,
    timer: checkTimerProp,
  },
  hooks: {
    async activate() {
      assertTimerFits(this.timer, checkedSchedule(this.cron, this.timeZone, "cron"));
    },
  },
  async run(event) {
    const timeZone = this.timeZone ?? "UTC";
    const cron = checkedSchedule(this.cron, timeZone, "cron");
    emitIfScheduled(this, event, cron, timeZone, { cron: cron.expression });
  },
};
