import { dataStore, key, keyText, kindOf, ttl } from "../../common/props.mjs";

export default {
  key: "data_stores-append-to-record",
  name: "Append to a list",
  description: "Adds a value to the end of the list stored under a key (a new list when the key is missing), optionally keeping only the newest items.",
  version: "0.1.0",
  type: "action",
  props: {
    dataStore,
    key,
    value: {
      type: "any",
      label: "Value",
      description: "The item to add, any JSON value, such as `{{steps.trigger.event.body}}`.",
    },
    maxLength: {
      type: "integer",
      label: "Keep at most",
      description: "Drop the oldest items past this many. Left empty: keep them all (the record's 60 KB limit still holds).",
      min: 1,
      optional: true,
    },
    ttl,
  },
  async run({ $ }) {
    const recordKey = keyText(this.key);
    if (this.value === undefined) throw new Error('Prop "value" gave nothing to append.');
    const current = (await this.dataStore.get(recordKey)) ?? [];
    if (!Array.isArray(current)) {
      throw new Error(`The record "${recordKey}" holds ${kindOf(current)}, not a list; delete it, or append under another key.`);
    }
    let list = [...current, this.value];
    if (this.maxLength && list.length > this.maxLength) list = list.slice(list.length - this.maxLength);
    await this.dataStore.set(recordKey, list, this.ttl ? { ttl: this.ttl } : undefined);
    $.export("$summary", `"${recordKey}" now has ${list.length} item${list.length === 1 ? "" : "s"}`);
    return list;
  },
};
