import { createHmac } from "node:crypto";

export default {
  key: "helper_functions-create-hmac",
  name: "HMAC signature",
  description: "Signs text with a secret key (HMAC with SHA-1, SHA-256, SHA-512 or MD5), as hex or base64.",
  version: "0.1.0",
  type: "action",
  props: {
    data: {
      type: "string",
      label: "Text",
      description: "The text to sign, such as a webhook's raw body.",
    },
    secret: {
      type: "string",
      label: "Secret key",
      description: "The shared secret (used as UTF-8 bytes).",
      secret: true,
    },
    algorithm: {
      type: "string",
      label: "Algorithm",
      description: "The hash function of the HMAC.",
      options: ["sha256", "sha1", "sha512", "md5"],
      default: "sha256",
      optional: true,
    },
    encoding: {
      type: "string",
      label: "Encoding",
      description: "How the signature is written.",
      options: ["hex", "base64"],
      default: "hex",
      optional: true,
    },
  },
  async run({ $ }) {
    if (this.secret === "") throw new Error('Prop "secret" is empty; an HMAC needs a key.');
    const algorithm = this.algorithm ?? "sha256";
    const signature = createHmac(algorithm, this.secret).update(this.data, "utf8").digest(this.encoding ?? "hex");
    $.export("$summary", `HMAC-${algorithm} of ${Buffer.byteLength(this.data)} bytes`);
    return signature;
  },
};
