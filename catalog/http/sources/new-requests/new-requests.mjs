import { assertVerificationConfig, checkRequest, headerFor, VERIFICATIONS } from "../../common/request-checks.mjs";

export default {
  key: "http-new-requests",
  name: "New requests",
  description:
    "Gives you a URL and emits an event for every HTTP request sent to it: the whole request or only its body. Can check a shared secret or an HMAC signature first, and answer with a response of your own.",
  version: "0.1.0",
  type: "source",
  props: {
    http: {
      type: "$.interface.http",
      customResponse: true,
      label: "Endpoint",
      description: "The URL that receives the requests (any method, any path under it).",
    },
    emitBodyOnly: {
      type: "boolean",
      label: "Body only",
      description: "Emit only the request's body (parsed JSON or form data, else text) instead of the method, path, query, headers and body.",
      default: false,
      optional: true,
    },
    responseStatus: {
      type: "integer",
      label: "Response status",
      description: "The HTTP status each accepted request is answered with.",
      min: 100,
      max: 599,
      default: 200,
      optional: true,
    },
    responseBody: {
      type: "string",
      label: "Response body",
      description: 'The body of the answer, sent as text (give its content-type in Response headers). Left empty: {"ok": true} as JSON.',
      optional: true,
    },
    responseHeaders: {
      type: "object",
      label: "Response headers",
      description: 'Headers of the answer, such as { "content-type": "text/plain" }.',
      optional: true,
    },
    verification: {
      type: "string",
      label: "Check the caller",
      description: "How to tell the sender's requests from anyone else's. A request that fails the check is answered 401 and emits nothing.",
      options: VERIFICATIONS,
      default: "none",
      optional: true,
    },
    secret: {
      type: "string",
      secret: true,
      label: "Secret",
      description: "The shared secret, or the key the sender signs the body with (HMAC). Required unless the check is None.",
      optional: true,
    },
    header: {
      type: "string",
      label: "Header name",
      description:
        "The header holding the secret or the signature, when the sender uses another name than the check's usual one (X-Webhook-Secret, X-Hub-Signature-256, X-Signature, Stripe-Signature).",
      optional: true,
    },
    toleranceSeconds: {
      type: "integer",
      label: "Timestamp tolerance (seconds)",
      description: "For a timestamped signature: how far from now its timestamp may be, so that an old request cannot be replayed.",
      min: 1,
      default: 300,
      optional: true,
    },
  },
  hooks: {
    async activate() {
      assertVerificationConfig({ verification: this.verification ?? "none", secret: this.secret });
    },
  },
  methods: {
    acceptedResponse() {
      const headers = { ...(this.responseHeaders ?? {}) };
      let body = { ok: true };
      if (typeof this.responseBody === "string" && this.responseBody !== "") body = this.responseBody;
      return { status: this.responseStatus ?? 200, headers, body };
    },
  },
  async run(event) {
    const verification = this.verification ?? "none";
    const check = checkRequest(event, { verification, secret: this.secret, header: this.header, toleranceSeconds: this.toleranceSeconds ?? 300 });
    if (!check.ok) {
      console.log(`Refused ${event.method} ${event.path} with 401: ${check.reason}. Nothing was emitted.`);
      this.http.respond({ status: 401, body: { error: `Unauthorized: ${check.reason}.` } });
      return;
    }
    this.http.respond(this.acceptedResponse());
    const summary = `${event.method} ${event.path}`;
    if (this.emitBodyOnly) {
      this.$emit(event.body ?? null, { summary });
      return;
    }
    const { method, path, query, body, bodyRaw } = event;
    const headers = { ...event.headers };
    // The shared secret is not kept in the event log, where anyone reading events would see it.
    if (verification === "shared-secret") delete headers[headerFor(verification, this.header)];
    this.$emit({ method, path, query, headers, body, bodyRaw }, { summary });
  },
};
