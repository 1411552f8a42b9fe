// How the new-requests source checks a caller: a shared secret in a header, or an HMAC
// signature in one of the usual header conventions.
import { safeEqual, verifySignature } from "../../common/signatures.mjs";

export const VERIFICATIONS = [
  { label: "None: accept every request", value: "none" },
  { label: "Shared secret in a header (X-Webhook-Secret unless you name another; \"Bearer <secret>\" is taken too)", value: "shared-secret" },
  { label: "HMAC-SHA256 as X-Hub-Signature-256: sha256=<hex>", value: "hub-signature-256" },
  { label: "HMAC-SHA256 as X-Signature: <hex or base64>", value: "x-signature" },
  { label: "HMAC-SHA256 with a timestamp, as Stripe-Signature: t=<seconds>,v1=<hex>", value: "timestamped" },
];

const DEFAULT_HEADERS = {
  "shared-secret": "x-webhook-secret",
  "hub-signature-256": "x-hub-signature-256",
  "x-signature": "x-signature",
  timestamped: "stripe-signature",
};

export function headerFor(verification, customHeader) {
  return (customHeader && customHeader.trim() !== "" ? customHeader : DEFAULT_HEADERS[verification]).trim().toLowerCase();
}

/** Throws a sentence naming the prop when the configuration cannot check anything. */
export function assertVerificationConfig({ verification, secret }) {
  const known = VERIFICATIONS.map((option) => option.value);
  if (!known.includes(verification)) throw new Error(`Prop "verification" must be one of ${known.join(", ")}; got ${JSON.stringify(verification)}.`);
  if (verification !== "none" && (typeof secret !== "string" || secret === "")) {
    throw new Error(`Prop "secret" is required when "verification" is "${verification}": set the secret the sender signs with.`);
  }
}

/** { ok: true } or { ok: false, reason } for one request (`event` as the HTTP interface gives it). */
export function checkRequest(event, { verification, secret, header, toleranceSeconds }) {
  if (verification === "none") return { ok: true };
  const name = headerFor(verification, header);
  const value = event.headers?.[name];
  const received = Array.isArray(value) ? value[0] : value;
  if (typeof received !== "string" || received === "") return { ok: false, reason: `the request has no ${name} header` };
  if (verification === "shared-secret") {
    // "Bearer <secret>" is taken in any header, as senders that use Authorization write it.
    return safeEqual(received.replace(/^Bearer\s+/i, ""), secret)
      ? { ok: true }
      : { ok: false, reason: `the ${name} header does not hold the shared secret` };
  }
  const body = event.bodyRaw ?? "";
  if (verification === "hub-signature-256") {
    if (!/^sha256=/i.test(received)) return { ok: false, reason: `the ${name} header must start with "sha256="` };
    return verifySignature({ payload: body, signature: received, secret, algorithm: "sha256", encodings: ["hex"] });
  }
  if (verification === "x-signature") {
    return verifySignature({ payload: body, signature: received, secret, algorithm: "sha256", encodings: ["hex", "base64"] });
  }
  if (!/(^|,)\s*t=/.test(received)) return { ok: false, reason: `the ${name} header must be t=<seconds>,v1=<signature>` };
  return verifySignature({ payload: body, signature: received, secret, algorithm: "sha256", encodings: ["hex"], toleranceSeconds });
}
