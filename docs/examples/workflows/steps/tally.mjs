// docs/examples/workflows/steps/tally.mjs
export default defineComponent({
  props: {
    db: "$.service.db", // this step's own store, kept across runs
    orders: { type: "data_store" }, // a named store shared with your other sources and steps
  },
  async run({ steps }) {
    const count = (this.db.get("count") ?? 0) + 1;
    this.db.set("count", count);
    const order = steps.parse.$return_value;
    await this.orders.set(order.id, steps.price.$return_value, { ttl: 30 * 24 * 3600 });
    return { count, stored: await this.orders.keys() };
  },
});
