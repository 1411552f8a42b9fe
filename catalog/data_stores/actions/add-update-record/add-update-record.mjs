import { dataStore, key, keyText, ttl } from "../../common/props.mjs";

export default {
  key: "data_stores-add-update-record",
  name: "Add or update a record",
  description: "Stores a value under a key in one of your data stores, replacing what the key held.",
  version: "0.1.0",
  type: "action",
  props: {
    dataStore,
    key,
    value: {
      type: "any",
      label: "Value",
      description: "Any JSON value (text, number, list, object), such as `{{steps.trigger.event.body}}`; at most 60 KB as JSON.",
    },
    ttl,
  },
  async run({ $ }) {
    const recordKey = keyText(this.key);
    if (this.value === undefined) throw new Error('Prop "value" gave nothing; to remove a record use "Delete a record".');
    const existed = await this.dataStore.has(recordKey);
    await this.dataStore.set(recordKey, this.value, this.ttl ? { ttl: this.ttl } : undefined);
    $.export("$summary", `${existed ? "Updated" : "Added"} "${recordKey}"`);
    return { key: recordKey, value: this.value, created: !existed };
  },
};
