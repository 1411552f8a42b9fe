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
} as const;

export type IdKind = keyof typeof ID_PREFIX;

// Crockford's base32, lower-cased: no ambiguous letters, safe in URLs and file names.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function encodeBase32(value: bigint, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/**
 * A new id: prefix, 10 characters of milliseconds, 16 random characters (80 bits).
 * Opaque to clients, but it sorts by creation time, which keeps cursor paging
 * a plain index range scan.
 */
export function newId(kind: IdKind, now: number = Date.now()): string {
  const time = encodeBase32(BigInt(now), 10);
  const random = encodeBase32(BigInt(`0x${randomBytes(10).toString("hex")}`), 16);
  return `${ID_PREFIX[kind]}${time}${random}`;
}

/**
 * An id of `kind` whose second part is made from `key` instead of chance:
 * the same key at the same time always gives the same id (a record made
 * again by a repeated attempt lands on the one made before).
 */
export function keyedId(kind: IdKind, now: number, key: string): string {
  const time = encodeBase32(BigInt(now), 10);
  const digest = createHash("sha256").update(key).digest("hex").slice(0, 20);
  return `${ID_PREFIX[kind]}${time}${encodeBase32(BigInt(`0x${digest}`), 16)}`;
}

/** True when `id` looks like an id of `kind` (prefix and alphabet). */
export function isIdOf(kind: IdKind, id: string): boolean {
  const prefix = ID_PREFIX[kind];
  if (!id.startsWith(prefix)) return false;
  const body = id.slice(prefix.length);
  return body.length === 26 && [...body].every((ch) => ALPHABET.includes(ch));
}
