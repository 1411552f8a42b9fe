// docs/examples/workflows/steps/parse.mjs
export default defineComponent({
  async run({ steps, $ }) {
    const order = steps.trigger.event.body;
    if (!order.id) throw new Error("An order needs an id");
    if (order.items.length === 0) {
      await $.respond({ status: 200, body: { skipped: "no items" } });
      return $.flow.exit("empty order"); // later steps are skipped
    }
    $.export("customer", order.customer); // steps.parse.customer
    $.export("$summary", `order ${order.id}, ${order.items.length} items`);
    return order; // steps.parse.$return_value
  },
});
