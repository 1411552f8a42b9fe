import { dataStore } from "../../common/props.mjs";

export default {
  key: "data_stores-list-keys",
  name: "List keys",
  description: "Lists the keys of one of your data stores, sorted, optionally only those that start with a prefix.",
  version: "0.1.0",
  type: "action",
  props: {
    dataStore,
    prefix: {
      type: "string",
      label: "Prefix",
      description: "Only keys that start with this, such as `order:`. Left empty: every key.",
      optional: true,
    },
  },
  async run({ $ }) {
    const prefix = this.prefix ?? "";
    const keys = (await this.dataStore.keys()).filter((candidate) => candidate.startsWith(prefix));
    $.export("$summary", `${keys.length} key${keys.length === 1 ? "" : "s"}${prefix ? ` starting with "${prefix}"` : ""}`);
    return keys;
  },
};
