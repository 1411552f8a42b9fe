export default {
  key: "email-send-email-to-self",
  name: "Send yourself an e-mail",
  description: "Mails you (the workflow's owner, at your account's address) a subject and text or HTML, after the run is recorded.",
  version: "0.1.0",
  type: "action",
  props: {
    subject: {
      type: "string",
      label: "Subject",
      description: "The mail's subject, such as `New order {{steps.trigger.event.body.id}}`.",
    },
    text: {
      type: "string",
      label: "Text",
      description: "The mail's plain text.",
    },
    html: {
      type: "string",
      label: "HTML",
      description: "An HTML version of the mail, shown by mail programs that can.",
      optional: true,
    },
  },
  async run({ $ }) {
    // Durable: put in the outbox with the run, and mailed (with retries) once the run is recorded.
    $.send.email({ subject: this.subject, text: this.text, ...(this.html ? { html: this.html } : {}) });
    $.export("$summary", `Mail "${this.subject}" queued for your address`.slice(0, 200));
  },
};
