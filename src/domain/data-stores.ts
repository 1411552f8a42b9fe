/**
 * Data stores: a user's named key-value stores (`data_store` props), shared
 * by every source and step of that user that names one, and the per-step
 * stores of workflow steps (`$.service.db` in an action). The rules here are
 * pure: names, keys, values, TTLs and the limits every path (runner, host,
 * API) checks against.
 */
import { ValidationError } from "./errors.js";

/**
 * The limits of one user's data stores. A value is capped like a source's
 * whole `$.service.db` (60 KB of JSON): a data store holds many of them, so
 * the owner's total is what bounds the disk and what `entries()` sends back.
 */
export const DATA_STORE_LIMITS = {
  /** A key, in UTF-8 bytes. */
  keyBytes: 1024,
  /** A value, as JSON text (the hosted service's cap on a component's store). */
  valueBytes: 60 * 1024,
  /** Keys one store holds, expired ones not counted. */
  keysPerStore: 10_000,
  /** Keys and values of all an owner's stores together, as stored. */
  ownerBytes: 10 * 1024 * 1024,
  /** Stores one owner has. */
  storesPerOwner: 100,
  /** A store's name, in characters. */
  nameChars: 100,
  /** The longest TTL, in seconds (a year). */
  maxTtlSeconds: 365 * 24 * 60 * 60,
} as const;

/** One record of a data store, as the store keeps it: its value as JSON text. */
export interface DataStoreRecord {
  key: string;
  value: unknown;
  /** Epoch ms after which the record is gone; null: never. */
  expiresAt: number | null;
  updatedAt: number;
}

export interface DataStoreSummary {
  name: string;
  /** Keys not expired. */
  keyCount: number;
  /** Bytes of its live keys and values. */
  bytes: number;
  createdAt: number;
  updatedAt: number;
}

/** What one data store call asks, from a component (over the runner's channel) or from the API. */
export type DataStoreOperation =
  | { op: "get"; key: string }
  | { op: "has"; key: string }
  | { op: "set"; key: string; value: string; ttlSeconds: number | null }
  | { op: "delete"; key: string }
  | { op: "keys" }
  | { op: "entries" }
  | { op: "clear" };

export const DATA_STORE_OPS = new Set(["get", "has", "set", "delete", "keys", "entries", "clear"]);

/** A store's name as a prop configures it or a URL names it: trimmed text without control characters. */
export function checkStoreName(name: unknown, field = "name"): string {
  if (typeof name !== "string" || name.trim() === "") throw new ValidationError(field, "A data store's name must be a non-empty string, for example \"cache\".");
  if (name.length > DATA_STORE_LIMITS.nameChars) throw new ValidationError(field, `A data store's name may be at most ${DATA_STORE_LIMITS.nameChars} characters; "${name.slice(0, 20)}…" has ${name.length}.`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new ValidationError(field, "A data store's name may not contain control characters.");
  return name;
}

export function checkStoreKey(key: unknown, field = "key"): string {
  if (typeof key !== "string" || key === "") throw new ValidationError(field, `A data store key must be a non-empty string; got ${key === "" ? "an empty string" : typeof key}.`);
  const bytes = Buffer.byteLength(key);
  if (bytes > DATA_STORE_LIMITS.keyBytes) throw new ValidationError(field, `A data store key may be at most ${DATA_STORE_LIMITS.keyBytes} bytes; this one has ${bytes}. Use a shorter key (a hash of a long one).`);
  return key;
}

/** The JSON text of a value, checked against the value limit. */
export function checkStoreValue(json: string, field = "value"): string {
  const bytes = Buffer.byteLength(json);
  if (bytes > DATA_STORE_LIMITS.valueBytes) {
    throw new ValidationError(field, `A data store value may be at most ${DATA_STORE_LIMITS.valueBytes / 1024} KB of JSON; this one is ${Math.ceil(bytes / 1024)} KB. Store less per key, or split it over several keys.`);
  }
  return json;
}

/** TTL in seconds: a positive number up to a year; null or undefined for none. */
export function checkTtl(ttl: unknown, field = "ttl"): number | null {
  if (ttl === undefined || ttl === null) return null;
  if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl <= 0) throw new ValidationError(field, `ttl must be a positive number of seconds; got ${JSON.stringify(ttl) ?? typeof ttl}.`);
  if (ttl > DATA_STORE_LIMITS.maxTtlSeconds) throw new ValidationError(field, `ttl may be at most ${DATA_STORE_LIMITS.maxTtlSeconds} seconds (a year); got ${ttl}.`);
  return ttl;
}

/** What one record costs against the owner's total. */
export function recordBytes(key: string, json: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(json);
}

/**
 * What a step's run changed in its `$.service.db`: the keys it set (with
 * their values) and those it removed. Concurrent runs of one workflow each
 * apply theirs, key by key, in the order they commit: per-key last writer wins.
 */
export interface StepStoreChanges {
  set: Record<string, unknown>;
  removed: string[];
}

export interface StepStoreWrite extends StepStoreChanges {
  ownerId: string;
  workflowId: string;
  stepId: string;
  /** The run that made the changes: applied only when that run is recorded now (not a delivery run twice). */
  runId: string;
}
