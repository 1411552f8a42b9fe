/**
 * The component's key-value store (`$.service.db` props) during one call: the
 * snapshot the host sent, changed in place by synchronous get/set, and sent
 * back whole with the call's answer when it changed.
 */
import type { DbSnapshot, StepStoreChanges } from "../protocol.js";
import { toJsonText } from "./json-check.js";

/** The hosted service's cap on one component's store, as JSON text. */
export const DB_MAX_BYTES = 60 * 1024;

export interface DbHandle {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
}

export class DbStore {
  /** Values as JSON text: get() hands out a fresh copy, so editing it changes nothing until set(). */
  private readonly entries = new Map<string, string>();
  private bytes = 2; // "{}"
  private changed = false;
  /** Keys set (or set to undefined) during the call, changed or not: a step's run writes back exactly these. */
  private readonly touched = new Set<string>();

  constructor(snapshot: DbSnapshot) {
    for (const [key, value] of Object.entries(snapshot)) {
      if (value === undefined) continue;
      const text = JSON.stringify(value);
      this.entries.set(key, text);
      this.bytes += entryBytes(key, text);
    }
  }

  /** The store as it is now. */
  snapshot(): DbSnapshot {
    const snapshot: DbSnapshot = {};
    for (const [key, text] of this.entries) snapshot[key] = JSON.parse(text);
    return snapshot;
  }

  /** The store after the call, or null when nothing was set. */
  changes(): DbSnapshot | null {
    return this.changed ? this.snapshot() : null;
  }

  /** The keys set during the call, with their values now (removed when absent); null when none was set. */
  keyChanges(): StepStoreChanges | null {
    if (this.touched.size === 0) return null;
    const changes: StepStoreChanges = { set: {}, removed: [] };
    for (const key of this.touched) {
      const text = this.entries.get(key);
      if (text === undefined) changes.removed.push(key);
      else changes.set[key] = JSON.parse(text);
    }
    return changes;
  }

  handle(propName: string): DbHandle {
    return {
      get: (key: string): unknown => {
        const text = this.entries.get(String(key));
        return text === undefined ? undefined : JSON.parse(text);
      },
      set: (key: string, value: unknown): void => this.set(propName, key, value),
    };
  }

  private set(propName: string, rawKey: unknown, value: unknown): void {
    if (typeof rawKey !== "string" && typeof rawKey !== "number") {
      throw new TypeError(`this.${propName}.set(): the key must be a string, got ${typeof rawKey}.`);
    }
    const key = String(rawKey);
    const before = this.entries.get(key);
    // Setting undefined removes the key, so that get() answers undefined as for a key never set.
    const text = value === undefined ? undefined : toJsonText(value, `this.${propName}.set(${JSON.stringify(key)}): the value`);
    if (text === before) {
      // Unchanged here, but set: for a step's store it overrides what a concurrent run set meanwhile.
      this.touched.add(key);
      return;
    }
    const bytes = this.bytes - (before === undefined ? 0 : entryBytes(key, before)) + (text === undefined ? 0 : entryBytes(key, text));
    if (text !== undefined && bytes > DB_MAX_BYTES) {
      throw new RangeError(
        `this.${propName}.set(${JSON.stringify(key)}): the store would hold ${bytes} bytes of JSON, over its limit of 60 KB (${DB_MAX_BYTES} bytes). Store less, or delete keys by setting them to undefined.`,
      );
    }
    if (text === undefined) this.entries.delete(key);
    else this.entries.set(key, text);
    this.bytes = bytes;
    this.changed = true;
    this.touched.add(key);
  }
}

/** What one entry adds to the store's JSON text: `"key":value` and a comma. */
function entryBytes(key: string, text: string): number {
  return Buffer.byteLength(JSON.stringify(key)) + 1 + Buffer.byteLength(text) + 1;
}
