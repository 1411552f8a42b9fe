export default {
  key: "http-custom-request",
  name: "Send an HTTP request",
  description:
    "Sends an HTTP request (method, URL, headers, query, body, auth) and returns the answer's body, parsed when it is JSON. The status and headers are exported as well.",
  version: "0.1.0",
  type: "action",
  props: {
    request: {
      type: "http_request",
      label: "Request",
      description:
        "method, url, headers, params (the query), auth ({ type: basic, username, password } or { type: bearer, token }) and body. Values may use {{ }} expressions.",
      default: { method: "GET" },
    },
    failOnErrorStatus: {
      type: "boolean",
      label: "Fail on an error status",
      description: "Fail the step when the answer's status is 400 or more. Off: any status is returned, and later steps can look at it.",
      default: false,
      optional: true,
    },
  },
  async run({ $ }) {
    const method = String(this.request?.method ?? "GET").toUpperCase();
    if (typeof this.request?.url !== "string" || this.request.url.trim() === "") {
      throw new Error('Prop "request" has no url: give the address to call, such as https://api.example.com/items.');
    }
    const { status, headers, data } = await this.request.execute();
    const target = `${method} ${this.request.url}`;
    if (this.failOnErrorStatus && status >= 400) {
      const excerpt = typeof data === "string" ? data.slice(0, 300) : JSON.stringify(data ?? null).slice(0, 300);
      throw new Error(`${target} answered ${status}: ${excerpt}`);
    }
    $.export("status", status);
    $.export("headers", headers);
    $.export("$summary", `${target} answered ${status}`);
    return data;
  },
};
