const UNITS = { milliseconds: 1, seconds: 1000, minutes: 60_000 };
/** Room kept after the wait for the rest of the run to finish and be recorded. */
const MARGIN_MS = 1000;

export default {
  key: "helper_functions-delay",
  name: "Delay",
  description:
    "Waits before the next step runs. The step holds the run while it waits, so the wait counts toward the run's time limit (60 s by default); pausing a run for hours ($.flow.delay) is not available yet.",
  version: "0.1.0",
  type: "action",
  props: {
    duration: {
      type: "integer",
      label: "Duration",
      description: "How long to wait, in the unit below.",
      min: 0,
    },
    unit: {
      type: "string",
      label: "Unit",
      description: "The unit of the duration.",
      options: Object.keys(UNITS),
      default: "seconds",
      optional: true,
    },
  },
  async run({ $ }) {
    const unit = this.unit ?? "seconds";
    const waitMs = this.duration * UNITS[unit];
    const leftMs = $.context.deadline - Date.now() - MARGIN_MS;
    if (waitMs > leftMs) {
      throw new Error(
        `A delay of ${this.duration} ${unit} does not fit in this run: it has ${Math.max(0, Math.floor(leftMs / 1000))} s left before its time limit ` +
          "(RUNNEL_RUN_TIMEOUT_SECONDS, or RUNNEL_HTTP_TIMEOUT_SECONDS for an HTTP trigger). Wait less, or raise the limit; " +
          "a pause that does not hold the run ($.flow.delay) is not available yet.",
      );
    }
    const started = Date.now();
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    const waited = Date.now() - started;
    $.export("$summary", `Waited ${this.duration} ${unit}`);
    return { waited_ms: waited };
  },
};
