import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secret prop values at rest: AES-256-GCM with a random 96-bit nonce per value.
 * The stored form is `enc:v1:<nonce>.<tag>.<ciphertext>` (base64url), so a
 * value tells whether it is encrypted and with which scheme.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error("The master key must be 32 bytes (AES-256).");
    this.key = masterKey;
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `${PREFIX}${nonce.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${body.toString("base64url")}`;
  }

  open(sealed: string): string {
    if (!isSealed(sealed)) throw new Error("Not an encrypted value.");
    const [nonce, tag, body] = sealed.slice(PREFIX.length).split(".");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(nonce ?? "", "base64url"));
    decipher.setAuthTag(Buffer.from(tag ?? "", "base64url"));
    try {
      return Buffer.concat([decipher.update(Buffer.from(body ?? "", "base64url")), decipher.final()]).toString("utf8");
    } catch {
      throw new Error("A secret prop could not be decrypted: the master key (RUNNEL_MASTER_KEY or <data>/master-key) is not the one it was encrypted with.");
    }
  }
}

const PREFIX = "enc:v1:";

/** What the API shows in place of a sealed value; sent back unchanged, it keeps the stored value. */
export const SECRET_MASK = "**********";

/** `props` as the API shows them: sealed values masked. */
export function maskSealed(props: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(props)) out[name] = isSealed(value) ? SECRET_MASK : value;
  return out;
}

export function isSealed(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(PREFIX);
}
