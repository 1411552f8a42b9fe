const UNITS = { milliseconds: 1, seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };
/** The longest a run may wait (the window the server keeps a waiting run in). */
const MAX_MS = 7 * 86_400_000;

export default {
  key: "helper_functions-delay",
  name: "Delay",
  description:
    "Pauses the run, then goes on with the next step after the delay (up to 7 days). Nothing is held while it waits: the wait survives a restart, and the run shows as Delayed until then. Returns the run's resume and cancel URLs.",
  version: "0.2.0",
  type: "action",
  props: {
    duration: {
      type: "integer",
      label: "Duration",
      description: "How long to wait, in the unit below (7 days at most).",
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
    const delayMs = this.duration * UNITS[unit];
    if (delayMs > MAX_MS) {
      const error = new Error(`A delay of ${this.duration} ${unit} is longer than the 7 days a run may wait. Wait 7 days or less.`);
      // No retry fixes it.
      error.name = "ConfigurationError";
      throw error;
    }
    const { resume_url, cancel_url } = $.flow.delay(delayMs);
    $.export("$summary", `Waiting ${this.duration} ${unit}`);
    return { delay_ms: delayMs, resume_url, cancel_url };
  },
};
