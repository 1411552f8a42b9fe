import { createHash, randomBytes } from "node:crypto";

/** Id prefixes by kind, as the hosted API uses them (API-COMPAT.md). */
export const ID_PREFIX = {
  user: "u_",
  apiKey: "ak_",
  savedComponent: "sc_",
  deployedComponent: "dc_",
  workflow: "p_",
  subscription: "sub_",
  webhook: "wh_",
  webhookDelivery: "whd_",
  deployment: "d_",
  cell: "c_",
  run: "run_",
  mail: "mail_",
  dataStore: "ds_",
  session: "ses_",
  /** A connected account of an app ("auth provision" in the hosted API's payloads). */
  appAccount: "apn_",
} as const;

export type IdKind = keyof typeof ID_PREFIX;

// Crockford's base32, lower-cased: no ambiguous letters, safe in URLs and file names.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** `value` (a non-negative integer below 2^53) as `length` base32 characters, most significant first. */
function encodeTime(value: number, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out = ALPHABET[value % 32]! + out;
    value = Math.floor(value / 32);
  }
  return out;
}

/**
 * Random bytes taken from a pool refilled 4 KB at a time: one call into the
 * system's generator per 400 ids instead of one per id (a workflow run makes
 * one id; under load that call was a visible share of the server's time).
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = POOL_BYTES;

function randomChunk(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const chunk = pool.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return chunk;
}

/** 10 random bytes (80 bits) as 16 base32 characters, 5 bits each. */
function encodeRandom(bytes: Buffer): string {
  let out = "";
  let bits = 0;
  let buffer = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31]!;
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

/**
 * A new id: prefix, 10 characters of milliseconds, 16 random characters (80 bits).
 * Opaque to clients, but it sorts by creation time, which keeps cursor paging
 * a plain index range scan.
 */
export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${ID_PREFIX[kind]}${encodeTime(now, 10)}${encodeRandom(randomChunk(10))}`;
}

/**
 * An id of `kind` whose second part is made from `key` instead of chance:
 * the same key at the same time always gives the same id (a record made
 * again by a repeated attempt lands on the one made before).
 */
export function keyedId(kind: IdKind, now: number, key: string): string {
  // The first 10 bytes (80 bits) of the key's digest, as the random part would be.
  const digest = createHash("sha256").update(key).digest().subarray(0, 10);
  return `${ID_PREFIX[kind]}${encodeTime(now, 10)}${encodeRandom(digest)}`;
}

/**
 * The lowest id of `kind` made at or after `at`: ids sort by creation time,
 * so `id >= idBoundAt(kind, at)` picks what was made since then by an index
 * range scan.
 */
export function idBoundAt(kind: IdKind, at: number): string {
  return `${ID_PREFIX[kind]}${encodeTime(Math.max(0, at), 10)}`;
}

/** True when `id` looks like an id of `kind` (prefix and alphabet). */
export function isIdOf(kind: IdKind, id: string): boolean {
  const prefix = ID_PREFIX[kind];
  if (!id.startsWith(prefix)) return false;
  const body = id.slice(prefix.length);
  return body.length === 26 && [...body].every((ch) => ALPHABET.includes(ch));
}
