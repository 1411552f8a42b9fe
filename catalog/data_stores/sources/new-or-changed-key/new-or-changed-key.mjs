import { createHash } from "node:crypto";
import { dataStore } from "../../common/props.mjs";

/**
 * What the source saw last is kept in its own `$.service.db` (60 KB in all)
 * as one text of fixed-width entries: per key, a 6-character fingerprint of
 * the key and one of its value (36 bits each, base64url of SHA-256). That
 * fits 4,000 keys. A change that keeps the value's fingerprint goes unseen
 * with a chance of one in 7·10^10; two of 4,000 keys sharing a fingerprint
 * (then both look changed at every check) about one in 10,000.
 */
const FINGERPRINT = 6;
const ENTRY = FINGERPRINT * 2;
const MAX_KEYS = 4000;

export default {
  key: "data_stores-new-or-changed-key",
  name: "New or changed key in a data store",
  description: "Checks one of your data stores on a schedule and emits an event for each key that is new or whose value changed since the last check.",
  version: "0.1.0",
  type: "source",
  props: {
    dataStore,
    timer: {
      type: "$.interface.timer",
      label: "Check every",
      description: "How often to compare the data store with what the source saw last.",
      default: { intervalSeconds: 60 },
    },
    db: {
      type: "$.service.db",
      label: "What the source saw last",
      description: "Fingerprints of the keys and values at the last check (kept by the source).",
    },
    prefix: {
      type: "string",
      label: "Key prefix",
      description: "Only follow keys that start with this, such as `order:`. Left empty: every key.",
      optional: true,
    },
    emitExisting: {
      type: "boolean",
      label: "Emit existing records first",
      description: "On the first check, emit every record already in the store as new. Off: only what is added or changed after the deploy.",
      default: false,
      optional: true,
    },
  },
  hooks: {
    async deploy() {
      // The baseline: records there at deploy are not news, unless asked for.
      if (!this.emitExisting) this.db.set("seen", this.snapshot(await this.followed()).text);
    },
  },
  async run() {
    const records = await this.followed();
    const previous = parseSeen(this.db.get("seen"));
    const now = this.snapshot(records);
    const ts = Date.now();
    let emitted = 0;
    for (const [key, value] of records) {
      const { keyPrint, valuePrint } = now.prints.get(key);
      const before = previous.get(keyPrint);
      if (before === valuePrint) continue;
      const change = before === undefined ? "new" : "changed";
      this.$emit({ key, value, change }, { id: `${key}\u0000${valuePrint}`, summary: `${change === "new" ? "New" : "Changed"} key "${key}"`.slice(0, 200), ts });
      emitted += 1;
    }
    this.db.set("seen", now.text);
    if (emitted === 0) console.log(`No new or changed keys among ${records.length}.`);
  },
  methods: {
    /** The records the source follows, sorted by key. */
    async followed() {
      const prefix = this.prefix ?? "";
      const records = (await this.dataStore.entries()).filter(([key]) => key.startsWith(prefix));
      if (records.length > MAX_KEYS) {
        throw new Error(`The data store has ${records.length} keys${prefix ? ` starting with "${prefix}"` : ""}; this source follows at most ${MAX_KEYS}. Set a key prefix that selects fewer.`);
      }
      return records;
    },
    snapshot(records) {
      const prints = new Map();
      let text = "";
      for (const [key, value] of records) {
        const entry = { keyPrint: fingerprint(key), valuePrint: fingerprint(JSON.stringify(value)) };
        prints.set(key, entry);
        text += entry.keyPrint + entry.valuePrint;
      }
      return { prints, text };
    },
  },
};

function fingerprint(text) {
  return createHash("sha256").update(text).digest("base64url").slice(0, FINGERPRINT);
}

/** The fingerprints seen last, by key fingerprint; nothing before the first check. */
function parseSeen(text) {
  const seen = new Map();
  if (typeof text !== "string") return seen;
  for (let at = 0; at + ENTRY <= text.length; at += ENTRY) seen.set(text.slice(at, at + FINGERPRINT), text.slice(at + FINGERPRINT, at + ENTRY));
  return seen;
}
