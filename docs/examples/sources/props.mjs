// docs/examples/sources/props.mjs
export default {
  name: "Every prop type",
  version: "0.1.0",
  props: {
    city: { type: "string", label: "City", description: "Where to look" },
    apiKey: { type: "string", secret: true },
    units: { type: "string", options: ["metric", { label: "Imperial", value: "imperial" }], default: "metric", optional: true },
    days: { type: "integer", min: 1, max: 14, default: 3, optional: true },
    alerts: { type: "boolean", optional: true },
    tags: { type: "string[]", optional: true },
    limits: { type: "integer[]", optional: true },
    extra: { type: "object", optional: true },
  },
  async run() {
    const { city, units, days, alerts, tags, limits, extra } = this;
    this.$emit({ city, units, days, alerts, tags, limits, extra, keyLength: this.apiKey.length });
  },
};
