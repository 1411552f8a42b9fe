// docs/examples/sources/timer.mjs
export default {
  name: "Heartbeat",
  version: "0.1.0",
  props: {
    timer: { type: "$.interface.timer", default: { intervalSeconds: 15 * 60 } },
  },
  async run(event) {
    // event: { timestamp: <epoch seconds>, interval_seconds: 900 } (or cron: "…")
    this.$emit({ beat: event.timestamp }, { summary: "heartbeat", ts: event.timestamp * 1000 });
  },
};
