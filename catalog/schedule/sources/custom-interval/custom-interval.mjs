export default {
  key: "schedule-custom-interval",
  name: "Custom interval",
  description: "Emits an event every N seconds (or on a cron schedule in the server's time zone). Use it to start a workflow on a regular beat.",
  version: "0.1.0",
  type: "source",
  props: {
    timer: {
      type: "$.interface.timer",
      label: "Interval",
      description: 'How often to emit, as { "intervalSeconds": 900 } (every 15 minutes by default).',
      default: { intervalSeconds: 15 * 60 },
    },
  },
  async run(event) {
    // A run by hand has no tick time: it stands for now.
    const timestamp = typeof event?.timestamp === "number" ? event.timestamp : Math.floor(Date.now() / 1000);
    const iso = new Date(timestamp * 1000).toISOString();
    const every = event?.interval_seconds != null ? { interval_seconds: event.interval_seconds } : event?.cron != null ? { cron: event.cron } : {};
    this.$emit({ timestamp, iso, ...every }, { summary: `Tick at ${iso}`, ts: timestamp * 1000 });
  },
};
