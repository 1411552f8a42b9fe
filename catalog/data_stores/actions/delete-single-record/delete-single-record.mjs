import { key, keyText, store } from "../../common/props.mjs";

export default {
  key: "data_stores-delete-single-record",
  name: "Delete a record",
  description: "Removes a key and its value from one of your data stores. A missing key is not an error.",
  version: "0.1.0",
  type: "action",
  props: { store, key },
  async run({ $ }) {
    const recordKey = keyText(this.key);
    const existed = await this.store.has(recordKey);
    if (existed) await this.store.delete(recordKey);
    $.export("$summary", existed ? `Deleted "${recordKey}"` : `"${recordKey}" was not there`);
    return { key: recordKey, deleted: existed };
  },
};
