/**
 * A `data_store` prop's value at run time: the user's store of the name the
 * prop is configured with, whose async methods ask the host over the
 * runner's channel (`store` messages; the host reads and writes the store at
 * once and answers). Arguments are checked here so that a mistake fails
 * where it is made, with the prop named; the host checks them all again.
 */
import type { DataStoreRequest } from "../protocol.js";
import { toJsonText } from "./json-check.js";

/** The same limits the host enforces (domain/data-stores.ts), repeated here: the runner imports nothing of the server. */
const MAX_KEY_BYTES = 1024;
const MAX_VALUE_BYTES = 60 * 1024;
const MAX_TTL_SECONDS = 365 * 24 * 60 * 60;

export type StoreRequester = (store: string, request: DataStoreRequest) => Promise<unknown>;

export interface DataStoreHandle {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown, options?: { ttl?: number }): Promise<void>;
  has(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  keys(): Promise<string[]>;
  entries(): Promise<Array<[string, unknown]>>;
  clear(): Promise<void>;
}

export function buildDataStoreProp(propName: string, configured: unknown, request: StoreRequester): DataStoreHandle {
  const what = (method: string) => `this.${propName}.${method}()`;
  const storeName = (method: string): string => {
    if (typeof configured !== "string" || configured === "") {
      throw new TypeError(`${what(method)}: the prop names no data store. Configure "${propName}" with the name of one of your data stores (for example "cache").`);
    }
    return configured;
  };
  const checkKey = (method: string, key: unknown): string => {
    if (typeof key !== "string" && typeof key !== "number") throw new TypeError(`${what(method)}: the key must be a string, got ${key === null ? "null" : typeof key}.`);
    const text = String(key);
    if (text === "") throw new TypeError(`${what(method)}: the key must not be empty.`);
    if (Buffer.byteLength(text) > MAX_KEY_BYTES) throw new RangeError(`${what(method)}: a key may be at most ${MAX_KEY_BYTES} bytes; this one has ${Buffer.byteLength(text)}.`);
    return text;
  };
  // Each method is async, so that a bad argument rejects the promise rather than throwing before it.
  return {
    async get(key) {
      return request(storeName("get"), { op: "get", key: checkKey("get", key) });
    },
    async set(key, value, options) {
      const name = storeName("set");
      const checked = checkKey("set", key);
      if (value === undefined) throw new TypeError(`${what("set")}: the value is undefined; use delete(key) to remove a key.`);
      const json = toJsonText(value, `${what("set")}: the value`);
      if (Buffer.byteLength(json) > MAX_VALUE_BYTES) {
        throw new RangeError(`${what("set")}: a value may be at most ${MAX_VALUE_BYTES / 1024} KB of JSON; this one is ${Math.ceil(Buffer.byteLength(json) / 1024)} KB. Split it over several keys.`);
      }
      const ttl = options?.ttl ?? null;
      if (ttl !== null && (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl <= 0 || ttl > MAX_TTL_SECONDS)) {
        throw new RangeError(`${what("set")}: ttl must be a number of seconds from above 0 to ${MAX_TTL_SECONDS} (a year); got ${JSON.stringify(ttl) ?? typeof ttl}.`);
      }
      await request(name, { op: "set", key: checked, value: json, ttl });
    },
    async has(key) {
      return (await request(storeName("has"), { op: "has", key: checkKey("has", key) })) === true;
    },
    async delete(key) {
      await request(storeName("delete"), { op: "delete", key: checkKey("delete", key) });
    },
    async keys() {
      const keys = await request(storeName("keys"), { op: "keys" });
      return Array.isArray(keys) ? (keys as string[]) : [];
    },
    async entries() {
      const entries = await request(storeName("entries"), { op: "entries" });
      return Array.isArray(entries) ? (entries as Array<[string, unknown]>) : [];
    },
    async clear() {
      await request(storeName("clear"), { op: "clear" });
    },
  };
}
