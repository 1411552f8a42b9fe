import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Subresource integrity strings (`sha512-<base64>`), as registries give them
 * in `dist.integrity`. They key the package cache and are checked on every
 * download: what is installed is exactly what was locked.
 */
const STRENGTH = ["sha1", "sha256", "sha384", "sha512"] as const;
type Algorithm = (typeof STRENGTH)[number];

interface Digest {
  algorithm: Algorithm;
  digest: Buffer;
}

/** The strongest hash of an integrity string (it may list several), or null when it has none we know. */
export function parseIntegrity(integrity: string): Digest | null {
  let best: Digest | null = null;
  for (const part of integrity.trim().split(/\s+/)) {
    const match = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/=_-]+)(?:\?.*)?$/.exec(part);
    if (!match) continue;
    const algorithm = match[1] as Algorithm;
    if (best && STRENGTH.indexOf(best.algorithm) >= STRENGTH.indexOf(algorithm)) continue;
    best = { algorithm, digest: Buffer.from(match[2]!, "base64") };
  }
  return best;
}

/** `dist.integrity`, or for packages older than it, the sha1 `dist.shasum` written as one. */
export function integrityOf(dist: { integrity?: string | undefined; shasum?: string | undefined }): string | null {
  if (dist.integrity && parseIntegrity(dist.integrity)) return dist.integrity;
  if (dist.shasum && /^[0-9a-f]{40}$/i.test(dist.shasum)) return `sha1-${Buffer.from(dist.shasum, "hex").toString("base64")}`;
  return null;
}

export function matchesIntegrity(bytes: Uint8Array, integrity: string): boolean {
  const expected = parseIntegrity(integrity);
  if (!expected) return false;
  const actual = createHash(expected.algorithm).update(bytes).digest();
  return actual.length === expected.digest.length && timingSafeEqual(actual, expected.digest);
}

/** A folder name for the package cache: the algorithm and the digest in base64url (no `/` or `+`). */
export function cacheKeyOf(integrity: string): string {
  const parsed = parseIntegrity(integrity);
  if (!parsed) throw new Error(`"${integrity}" is not an integrity string`);
  return `${parsed.algorithm}-${parsed.digest.toString("base64url")}`;
}
