// docs/examples/sources/padded.mjs
import leftpad from "leftpad@^1.0.0";

export default {
  name: "Padded",
  version: "0.1.0",
  async run() {
    this.$emit({ invoice: leftpad("42", 6, "0"), version: leftpad.version });
  },
};
