import { createHash } from "node:crypto";

export default {
  key: "helper_functions-create-hash",
  name: "Hash text",
  description: "Hashes text (UTF-8) with MD5, SHA-1, SHA-256 or SHA-512, as hex or base64.",
  version: "0.1.0",
  type: "action",
  props: {
    data: {
      type: "string",
      label: "Text",
      description: "The text to hash.",
    },
    algorithm: {
      type: "string",
      label: "Algorithm",
      description: "The hash function. MD5 and SHA-1 only for checksums, not for security.",
      options: ["md5", "sha1", "sha256", "sha512"],
      default: "sha256",
      optional: true,
    },
    encoding: {
      type: "string",
      label: "Encoding",
      description: "How the digest is written.",
      options: ["hex", "base64"],
      default: "hex",
      optional: true,
    },
  },
  async run({ $ }) {
    const algorithm = this.algorithm ?? "sha256";
    const digest = createHash(algorithm).update(this.data, "utf8").digest(this.encoding ?? "hex");
    $.export("$summary", `${algorithm} of ${Buffer.byteLength(this.data)} bytes`);
    return digest;
  },
};
