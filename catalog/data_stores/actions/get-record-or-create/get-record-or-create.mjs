import { dataStore, key, keyText, ttl } from "../../common/props.mjs";

export default {
  key: "data_stores-get-record-or-create",
  name: "Get a record (or create it)",
  description: "Reads the value of a key in one of your data stores; when the key is missing, stores and returns a default you give, or returns null.",
  version: "0.1.1",
  type: "action",
  props: {
    dataStore,
    key,
    value: {
      type: "any",
      label: "Value if missing",
      description: "Stored under the key and returned when the key is missing. Left empty: a missing key returns null and stores nothing.",
      optional: true,
    },
    addRecordIfNotFound: {
      type: "string",
      label: "Create the record if the key is missing?",
      description: "No: a missing key returns null and stores nothing, even with a value. Yes (or left empty): the value, when given, is stored. The hosted registry's configurations set it.",
      options: ["Yes", "No"],
      optional: true,
    },
    ttl: { ...ttl, description: "When the default is stored: remove it this many seconds later. Left empty: kept until deleted." },
  },
  async run({ $ }) {
    const recordKey = keyText(this.key);
    const value = await this.dataStore.get(recordKey);
    if (value !== undefined) {
      $.export("found", true);
      $.export("$summary", `Found "${recordKey}"`);
      return value;
    }
    $.export("found", false);
    if (this.value === undefined || this.addRecordIfNotFound === "No") {
      $.export("$summary", `"${recordKey}" is not in the data store`);
      return null;
    }
    await this.dataStore.set(recordKey, this.value, this.ttl ? { ttl: this.ttl } : undefined);
    $.export("$summary", `"${recordKey}" was missing: stored the default`);
    return this.value;
  },
};
