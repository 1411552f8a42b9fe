import { cronAt, parseTimeOfDay } from "../../common/time-of-day.mjs";
import { assertTimerFits, checkedSchedule, checkTimerProp, emitIfScheduled, timeZoneProp } from "../../common/zoned-schedule.mjs";

const DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

export default {
  key: "schedule-weekly",
  name: "Every week on a day at a time",
  description: "Emits an event every week on the days and at the time of day you choose, in your time zone.",
  version: "0.1.0",
  type: "source",
  dedupe: "unique",
  props: {
    daysOfWeek: {
      type: "string[]",
      label: "Days of the week",
      description: "One or more days, such as monday.",
      options: DAYS.map((day) => ({ label: day[0].toUpperCase() + day.slice(1), value: day })),
      default: ["monday"],
    },
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
    days() {
      const days = Array.isArray(this.daysOfWeek) ? this.daysOfWeek.map((day) => String(day).trim().toLowerCase()) : [];
      const unknown = days.find((day) => !DAYS.includes(day));
      if (days.length === 0 || unknown !== undefined) {
        throw new Error(`Prop "daysOfWeek" must list days by name (${DAYS.join(", ")})${unknown !== undefined ? `; "${unknown}" is not one` : ""}.`);
      }
      return [...new Set(days)];
    },
    schedule() {
      const weekdays = this.days().map((day) => DAYS.indexOf(day)).join(",");
      return checkedSchedule(cronAt(parseTimeOfDay(this.timeOfDay, "timeOfDay"), weekdays), this.timeZone, "timeOfDay");
    },
  },
  hooks: {
    async activate() {
      assertTimerFits(this.timer, this.schedule());
    },
  },
  async run(event) {
    emitIfScheduled(this, event, this.schedule(), this.timeZone ?? "UTC", { days_of_week: this.days(), time_of_day: this.timeOfDay.trim() });
  },
};
