import { dataStore, key, keyText, kindOf, ttl } from "../../common/props.mjs";

export default {
  key: "data_stores-increment-counter",
  name: "Increment a counter",
  description:
    "Adds a number (1 by default) to the counter stored under a key, starting from 0 when the key is missing, and returns the new value. A read then a write: two runs incrementing the same key within the same few milliseconds can count once.",
  version: "0.1.0",
  type: "action",
  props: {
    dataStore,
    key,
    by: {
      type: "integer",
      label: "Add",
      description: "What to add; negative to count down.",
      default: 1,
      optional: true,
    },
    ttl,
  },
  async run({ $ }) {
    const recordKey = keyText(this.key);
    // A read, then a write: the data store has no compare-and-set, so this is
    // as atomic as one call after another gets. Each call is carried out at
    // once, so the window is the round trip between them (a few ms); two runs
    // inside it both add to the same value, and the later write wins.
    const current = (await this.dataStore.get(recordKey)) ?? 0;
    if (typeof current !== "number" || !Number.isFinite(current)) {
      throw new Error(`The record "${recordKey}" holds ${kindOf(current)}, not a number; delete it, or count under another key.`);
    }
    const next = current + (this.by ?? 1);
    await this.dataStore.set(recordKey, next, this.ttl ? { ttl: this.ttl } : undefined);
    $.export("$summary", `"${recordKey}" is now ${next}`);
    return next;
  },
};
