// docs/examples/sources/echo.mjs
export default {
  name: "Echo",
  version: "0.1.0",
  props: { http: "$.interface.http" },
  async run(event) {
    this.$emit(event.body, { summary: `${event.method} ${event.path}` });
  },
};
