import { dataStore, key, keyText } from "../../common/props.mjs";

export default {
  key: "data_stores-delete-single-record",
  name: "Delete a record",
  description: "Removes a key and its value from one of your data stores. A missing key is not an error.",
  version: "0.1.0",
  type: "action",
  props: { dataStore, key },
  async run({ $ }) {
    const recordKey = keyText(this.key);
    const existed = await this.dataStore.has(recordKey);
    if (existed) await this.dataStore.delete(recordKey);
    $.export("$summary", existed ? `Deleted "${recordKey}"` : `"${recordKey}" was not there`);
    return { key: recordKey, deleted: existed };
  },
};
