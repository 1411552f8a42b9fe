// docs/examples/workflows/steps/price.ts
interface Item {
  sku: string;
  price: number;
  quantity: number;
}

export default defineComponent({
  props: {
    items: { type: "any" },
    currency: { type: "string", options: ["EUR", "USD"] },
    discount: { type: "integer", min: 0, max: 50, default: 0, optional: true },
  },
  async run() {
    const items = this.items as Item[];
    const gross = items.reduce((sum, item) => sum + item.price * item.quantity, 0);
    const total = Math.round(gross * (100 - this.discount)) / 100;
    return { total, currency: this.currency };
  },
});
