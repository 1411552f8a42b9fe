// docs/examples/actions/format-money.mjs
export default {
  key: "format-money",
  name: "Format money",
  description: "Formats an amount for people, in a currency and a language",
  version: "0.1.0",
  type: "action",
  props: {
    amount: { type: "any", label: "Amount" },
    currency: { type: "string", default: "EUR", optional: true },
    locale: { type: "string", options: ["en-GB", "de-DE", "pt-PT"], default: "en-GB", optional: true },
  },
  async run({ $ }) {
    const text = new Intl.NumberFormat(this.locale, { style: "currency", currency: this.currency }).format(this.amount);
    $.export("$summary", `Formatted ${this.amount} as ${text}`);
    return text;
  },
};
