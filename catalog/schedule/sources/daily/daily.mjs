import { cronAt, parseTimeOfDay } from "../../common/time-of-day.mjs";
import { assertTimerFits, checkedSchedule, checkTimerProp, emitIfScheduled, timeZoneProp } from "../../common/zoned-schedule.mjs";

export default {
  key: "schedule-daily",
  name: "Every day at a time",
  description: "Emits an event once a day at the time of day you choose, in your time zone.",
  version: "0.1.0",
  type: "source",
  dedupe: "unique",
  props: {
    timeOfDay: {
      type: "string",
      label: "Time of day",
      description: "24-hour time, such as 09:00 or 17:30.",
      default: "09:00",
    },
    timeZone: timeZoneProp,
    timer: checkTimerProp,
  },
  methods: {
    schedule() {
      return checkedSchedule(cronAt(parseTimeOfDay(this.timeOfDay, "timeOfDay")), this.timeZone, "timeOfDay");
    },
  },
  hooks: {
    async activate() {
      assertTimerFits(this.timer, this.schedule());
    },
  },
  async run(event) {
    emitIfScheduled(this, event, this.schedule(), this.timeZone ?? "UTC", { time_of_day: this.timeOfDay.trim() });
  },
};
