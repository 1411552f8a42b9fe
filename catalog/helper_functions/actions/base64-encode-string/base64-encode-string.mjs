export default {
  key: "helper_functions-base64-encode-string",
  name: "Base64 encode",
  description: "Encodes text (UTF-8) as base64, or as URL-safe base64.",
  version: "0.1.0",
  type: "action",
  props: {
    data: {
      type: "string",
      label: "Text",
      description: "The text to encode.",
    },
    urlSafe: {
      type: "boolean",
      label: "URL-safe",
      description: "Use - and _ instead of + and /, without = padding (base64url).",
      default: false,
      optional: true,
    },
  },
  async run({ $ }) {
    const encoded = Buffer.from(this.data, "utf8").toString(this.urlSafe ? "base64url" : "base64");
    $.export("$summary", `Encoded ${Buffer.byteLength(this.data)} bytes`);
    return encoded;
  },
};
