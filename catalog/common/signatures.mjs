// HMAC signatures of webhooks: computing, comparing in constant time, and the
// timestamped "t=<seconds>,v1=<hex>" form (the signed text is "<t>.<body>").
import { createHmac, timingSafeEqual } from "node:crypto";

export const ALGORITHMS = ["sha256", "sha1"];
export const ENCODINGS = ["hex", "base64"];

export function hmac(algorithm, secret, payload, encoding) {
  return createHmac(algorithm, secret).update(payload, "utf8").digest(encoding);
}

/** Constant-time equality of two strings (different lengths are simply unequal). */
export function safeEqual(a, b) {
  const left = Buffer.from(String(a), "utf8");
  const right = Buffer.from(String(b), "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** "t=1700000000,v1=abc,v1=def" → { timestamp: "1700000000", signatures: ["abc", "def"] }, or null for another form. */
export function parseTimestamped(header) {
  if (typeof header !== "string" || !/(^|,)\s*t=/.test(header)) return null;
  let timestamp = null;
  const signatures = [];
  for (const item of header.split(",")) {
    const [name, ...rest] = item.trim().split("=");
    const value = rest.join("=");
    if (name === "t") timestamp = value;
    else if (name === "v1") signatures.push(value);
  }
  return timestamp !== null && signatures.length > 0 ? { timestamp, signatures } : null;
}

/** A timestamp in epoch seconds or milliseconds (a number or its text) → epoch ms, or NaN. */
function timestampMs(value) {
  const number = typeof value === "number" ? value : /^\s*\d+(\.\d+)?\s*$/.test(String(value)) ? Number(value) : NaN;
  return number > 1e11 ? number : number * 1000;
}

/**
 * Checks a signature of `payload`. `signature` may carry an "<algorithm>=" prefix
 * (X-Hub-Signature-256: sha256=…) or be the timestamped form (t=…,v1=…). With a
 * timestamp, the signed text is "<timestamp>.<payload>" and the timestamp must be
 * within `toleranceSeconds` of now. `encodings` lists the digests accepted.
 * Answers { ok: true, timestamp? } or { ok: false, reason } (the reason never holds the secret).
 */
export function verifySignature({ payload, signature, secret, algorithm = "sha256", encodings = ["hex"], timestamp, toleranceSeconds = 300, now = Date.now() }) {
  if (typeof signature !== "string" || signature.trim() === "") return { ok: false, reason: "the request carries no signature" };
  let candidates = [signature.trim()];
  let signedAt = timestamp;
  const timestamped = parseTimestamped(signature);
  if (timestamped) {
    candidates = timestamped.signatures;
    signedAt = timestamped.timestamp;
  }
  candidates = candidates.map((candidate) => candidate.replace(new RegExp(`^${algorithm}=`, "i"), ""));
  let signedText = String(payload ?? "");
  if (signedAt !== undefined && signedAt !== null && signedAt !== "") {
    const at = timestampMs(signedAt);
    if (Number.isNaN(at)) return { ok: false, reason: `the timestamp "${signedAt}" is not a number of seconds` };
    const skewSeconds = Math.abs(now - at) / 1000;
    if (skewSeconds > toleranceSeconds) {
      return { ok: false, reason: `the timestamp is ${Math.round(skewSeconds)} s away from now, more than the ${toleranceSeconds} s allowed (a replayed or delayed request)` };
    }
    signedText = `${signedAt}.${signedText}`;
  }
  const expected = encodings.map((encoding) => hmac(algorithm, secret, signedText, encoding));
  const matches = candidates.some((candidate) => expected.some((digest) => safeEqual(candidate, digest)));
  if (!matches) return { ok: false, reason: `the ${algorithm.toUpperCase()} signature does not match the body and the secret` };
  return signedAt !== undefined && signedAt !== null && signedAt !== "" ? { ok: true, timestamp: String(signedAt) } : { ok: true };
}
