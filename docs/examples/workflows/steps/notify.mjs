// docs/examples/workflows/steps/notify.mjs
export default defineComponent({
  props: {
    url: { type: "string" },
    token: { type: "string", secret: true },
    text: { type: "string" },
  },
  async run({ $ }) {
    // Sent after the run is recorded, retried until it is taken, always with the
    // same Idempotency-Key header: <run id>:<step position>:<send position>.
    $.send.http({
      method: "POST",
      url: this.url,
      headers: { authorization: `Bearer ${this.token}` },
      data: { text: this.text },
    });
  },
});
