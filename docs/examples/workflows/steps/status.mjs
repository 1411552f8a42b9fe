// docs/examples/workflows/steps/status.mjs
export default defineComponent({
  props: { request: { type: "http_request" } },
  async run({ $ }) {
    const { status, data } = await this.request.execute(); // any status resolves; data is parsed JSON
    if (status !== 200) return $.flow.exit(`the status page answered ${status}`);
    $.export("$summary", `status: ${data.state}`);
    return data;
  },
});
