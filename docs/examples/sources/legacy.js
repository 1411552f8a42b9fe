// docs/examples/sources/legacy.js
const { createHash } = require("node:crypto");

module.exports = {
  name: "Fingerprint",
  version: "0.1.0",
  props: { http: { type: "$.interface.http" } },
  async run(event) {
    const sha256 = createHash("sha256").update(event.bodyRaw).digest("hex");
    this.$emit({ sha256 });
  },
};
