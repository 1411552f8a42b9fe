export default {
  key: "email-new-email",
  name: "New e-mail",
  description:
    "Gives you an e-mail address on this Runnel server (its SMTP listener, RUNNEL_SMTP_LISTEN) and emits each message sent to it: sender, recipients, subject, text, HTML, headers and attachments.",
  version: "0.1.0",
  type: "source",
  // A message retried by its sender (after a "try again later") is emitted once.
  dedupe: "unique",
  props: {
    // The endpoint's token is the mailbox: <token>@<the server's mail domain>.
    http: {
      type: "$.interface.http",
      label: "Address",
      description: "The source's address is <token>@<mail domain>, where <token> is the last part of its endpoint URL. The endpoint itself takes no requests.",
      customResponse: true,
    },
  },
  hooks: {
    async activate() {
      console.log(`Send e-mail to ${addressOf(this.http.endpoint)} (or <token>@<RUNNEL_SMTP_DOMAIN> when the server sets it). The server must listen for mail: RUNNEL_SMTP_LISTEN.`);
    },
  },
  async run(event) {
    if (isHttpRequest(event)) {
      // Mail only: a POST here must not pass for a message.
      this.http.respond({ status: 405, body: { error: `This source takes e-mail, not HTTP requests: send mail to ${addressOf(this.http.endpoint)}.` } });
      return;
    }
    if (event === null || typeof event !== "object") {
      console.log("Run by hand without a message: nothing to emit. Give an event shaped as a received mail, or send one.");
      return;
    }
    const from = event.from ? event.from.address : event.envelope?.mailFrom ?? "unknown sender";
    const ts = Date.parse(event.receivedAt) || Date.now();
    const id = event.messageId ?? `${ts}:${from}:${event.subject}`;
    this.$emit(event, { id, summary: `${from}: ${event.subject || "(no subject)"}`.slice(0, 200), ts });
  },
};

/** The address the endpoint URL stands for: its token at its host. */
function addressOf(endpoint) {
  const url = new URL(endpoint);
  return `${url.pathname.split("/").pop()}@${url.hostname}`;
}

/** The platform hands an HTTP request as { method, path, query, headers, bodyRaw, body }; a mail event has none of those. */
function isHttpRequest(event) {
  return event !== null && typeof event === "object" && typeof event.method === "string" && "bodyRaw" in event;
}
