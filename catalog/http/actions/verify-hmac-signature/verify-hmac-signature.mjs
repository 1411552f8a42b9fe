import { ALGORITHMS, ENCODINGS, verifySignature } from "../../../common/signatures.mjs";

export default {
  key: "http-verify-hmac-signature",
  name: "Verify a webhook signature",
  description:
    "Checks the HMAC (SHA-256 or SHA-1) signature a sender put on a webhook's body, with an optional timestamp tolerance. On a mismatch it ends the workflow, or fails the step, as you choose.",
  version: "0.1.0",
  type: "action",
  props: {
    payload: {
      type: "string",
      label: "Signed body",
      description: "The raw body that was signed: {{steps.trigger.event.bodyRaw}} for an HTTP trigger.",
      optional: true,
    },
    signature: {
      type: "string",
      label: "Signature",
      description:
        'The signature received, such as {{steps.trigger.event.headers["x-hub-signature-256"]}}. A "sha256=" prefix is removed, and the form t=<seconds>,v1=<signature> is read with its timestamp. A request without one fails the check.',
      optional: true,
    },
    secret: {
      type: "string",
      secret: true,
      label: "Secret",
      description: "The key the sender signs with.",
    },
    algorithm: {
      type: "string",
      label: "Algorithm",
      description: "The HMAC hash.",
      options: [
        { label: "HMAC-SHA256", value: "sha256" },
        { label: "HMAC-SHA1", value: "sha1" },
      ],
      default: "sha256",
      optional: true,
    },
    encoding: {
      type: "string",
      label: "Encoding",
      description: "How the signature is written.",
      options: ENCODINGS,
      default: "hex",
      optional: true,
    },
    timestamp: {
      type: "string",
      label: "Timestamp",
      description:
        'When the sender signs "<timestamp>.<body>": the timestamp it sent (epoch seconds), such as {{steps.trigger.event.headers["x-timestamp"]}}. Leave empty when only the body is signed.',
      optional: true,
    },
    toleranceSeconds: {
      type: "integer",
      label: "Timestamp tolerance (seconds)",
      description: "How far from now the timestamp may be; an older request is refused as a possible replay.",
      min: 1,
      default: 300,
      optional: true,
    },
    onMismatch: {
      type: "string",
      label: "On a mismatch",
      description: "End the workflow quietly (its run is marked exited), or fail the step (the run is an error, listed and mailed).",
      options: [
        { label: "End the workflow", value: "exit" },
        { label: "Fail the step", value: "throw" },
      ],
      default: "exit",
      optional: true,
    },
  },
  async run({ $ }) {
    const algorithm = this.algorithm ?? "sha256";
    if (!ALGORITHMS.includes(algorithm)) throw new Error(`Prop "algorithm" must be one of ${ALGORITHMS.join(", ")}; got ${JSON.stringify(algorithm)}.`);
    const result = verifySignature({
      payload: this.payload,
      signature: this.signature,
      secret: this.secret,
      algorithm,
      encodings: [this.encoding ?? "hex"],
      timestamp: this.timestamp,
      toleranceSeconds: this.toleranceSeconds ?? 300,
    });
    if (!result.ok) {
      const reason = `Signature check failed: ${result.reason}.`;
      if ((this.onMismatch ?? "exit") === "throw") throw new Error(reason);
      return $.flow.exit(reason);
    }
    $.export("$summary", "The signature is valid");
    return { verified: true, algorithm, ...(result.timestamp ? { timestamp: result.timestamp } : {}) };
  },
};
