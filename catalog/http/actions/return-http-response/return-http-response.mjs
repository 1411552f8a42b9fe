export default {
  key: "http-return-http-response",
  name: "Return HTTP response",
  description:
    'Answers the HTTP request that started the workflow, with the status, headers and body you give. The workflow must be set to respond from a step ("respond": "workflow").',
  version: "0.1.0",
  type: "action",
  props: {
    status: {
      type: "integer",
      label: "Status",
      description: "The HTTP status code, such as 200 or 404.",
      min: 100,
      max: 599,
      default: 200,
      optional: true,
    },
    headers: {
      type: "object",
      label: "Headers",
      description: 'Response headers, such as { "content-type": "text/html" }.',
      optional: true,
    },
    body: {
      type: "any",
      label: "Body",
      description: "The response body: text is sent as it is, an object or a list as JSON.",
      optional: true,
    },
  },
  async run({ $ }) {
    const status = this.status ?? 200;
    await $.respond({ status, headers: this.headers ?? {}, body: this.body ?? "" });
    $.export("$summary", `Responded with HTTP ${status}`);
    return { status };
  },
};
