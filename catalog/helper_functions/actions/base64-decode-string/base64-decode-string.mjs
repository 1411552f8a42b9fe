export default {
  key: "helper_functions-base64-decode-string",
  name: "Base64 decode",
  description: "Decodes base64 (or URL-safe base64) back into text or hex.",
  version: "0.1.0",
  type: "action",
  props: {
    data: {
      type: "string",
      label: "Base64",
      description: "The base64 or base64url text to decode; spaces and line breaks are ignored.",
    },
    outputFormat: {
      type: "string",
      label: "Output",
      description: "What to return: the bytes as UTF-8 text, or as hex.",
      options: [
        { label: "UTF-8 text", value: "utf8" },
        { label: "Hex", value: "hex" },
      ],
      default: "utf8",
      optional: true,
    },
  },
  async run({ $ }) {
    const compact = this.data.replace(/\s+/g, "");
    // Buffer.from skips what is not base64 without a word; a typo must not pass for data.
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
      throw new Error('Prop "data" is not base64: it may hold only A-Z, a-z, 0-9, + / (or - _) and = at the end.');
    }
    const decoded = Buffer.from(compact.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    $.export("$summary", `Decoded ${decoded.length} bytes`);
    return decoded.toString(this.outputFormat ?? "utf8");
  },
};
