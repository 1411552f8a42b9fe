// docs/examples/workflows/steps/reply.mjs
export default defineComponent({
  async run({ steps, $ }) {
    await $.respond({ status: 200, headers: { "x-order": steps.parse.$return_value.id }, body: steps.price.$return_value });
  },
});
