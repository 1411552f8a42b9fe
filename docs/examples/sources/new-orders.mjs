// docs/examples/sources/new-orders.mjs
export default {
  name: "New orders",
  version: "0.1.0",
  dedupe: "unique", // or "greatest" (numeric ids only ever grow) or "last"
  props: { http: "$.interface.http" },
  async run(event) {
    for (const order of event.body.orders) {
      this.$emit(order, {
        id: order.id, // what dedupe compares: an id seen before is dropped
        summary: `Order ${order.id}: ${order.total} EUR`,
        ts: Date.parse(order.created_at), // events are emitted oldest first
      });
    }
  },
};
