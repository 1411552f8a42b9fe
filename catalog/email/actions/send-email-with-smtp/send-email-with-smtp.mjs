import { buildMessage, parseAddress } from "../../common/mime-message.mjs";
import { sendMail } from "../../common/smtp-client.mjs";

export default {
  key: "email-send-email-with-smtp",
  name: "Send an e-mail (SMTP)",
  description: "Sends an e-mail to anyone through an SMTP server you name (your provider's, or your own), with text and/or HTML.",
  version: "0.1.0",
  type: "action",
  props: {
    host: {
      type: "string",
      label: "SMTP host",
      description: "The SMTP server's name, such as smtp.example.com.",
    },
    port: {
      type: "integer",
      label: "Port",
      description: "587 for STARTTLS (the usual), 465 for TLS from the start, 25 on a trusted network.",
      min: 1,
      max: 65535,
      default: 587,
      optional: true,
    },
    security: {
      type: "string",
      label: "Security",
      description: "How the connection is encrypted. STARTTLS fails when the server does not offer it (nothing is sent in the clear).",
      options: [
        { label: "STARTTLS (port 587)", value: "starttls" },
        { label: "TLS from the start (port 465)", value: "tls" },
        { label: "None (a server on a trusted network)", value: "none" },
      ],
      default: "starttls",
      optional: true,
    },
    allowUntrustedCertificate: {
      type: "boolean",
      label: "Accept an untrusted certificate",
      description: "Accept a self-signed or otherwise untrusted certificate (an internal server). Off: the certificate must be valid for the host.",
      default: false,
      optional: true,
    },
    username: {
      type: "string",
      label: "User name",
      description: "The SMTP login. Left empty: no login.",
      optional: true,
    },
    password: {
      type: "string",
      label: "Password",
      description: "The SMTP password (or app password).",
      secret: true,
      optional: true,
    },
    from: {
      type: "string",
      label: "From",
      description: 'The sender, such as orders@example.com or "Shop <orders@example.com>"; the server may require one of your own addresses.',
    },
    to: {
      type: "string[]",
      label: "To",
      description: "The recipients' addresses.",
    },
    cc: {
      type: "string[]",
      label: "Cc",
      description: "Recipients in copy.",
      optional: true,
    },
    bcc: {
      type: "string[]",
      label: "Bcc",
      description: "Recipients in hidden copy (not written in the message).",
      optional: true,
    },
    replyTo: {
      type: "string",
      label: "Reply to",
      description: "Where replies go, when not to the sender.",
      optional: true,
    },
    subject: {
      type: "string",
      label: "Subject",
      description: "The mail's subject.",
    },
    text: {
      type: "string",
      label: "Text",
      description: "The plain text. Give text, HTML or both.",
      optional: true,
    },
    html: {
      type: "string",
      label: "HTML",
      description: "The HTML version.",
      optional: true,
    },
  },
  async run({ $ }) {
    if (/[\r\n]/.test(this.subject)) throw new Error('Prop "subject" must be one line: it holds a line break.');
    if (!this.text && !this.html) throw new Error('Props "text" and "html" are both empty; give the mail a text, an HTML body, or both.');
    if (this.username && !this.password) throw new Error('Prop "password" is empty, but "username" is set; give both, or neither for a server without login.');
    const to = (this.to ?? []).map((address, index) => parseAddress(address, `to[${index}]`));
    if (to.length === 0) throw new Error('Prop "to" is empty; give at least one recipient.');
    const cc = (this.cc ?? []).map((address, index) => parseAddress(address, `cc[${index}]`));
    const bcc = (this.bcc ?? []).map((address, index) => parseAddress(address, `bcc[${index}]`));
    const from = parseAddress(this.from, "from");
    const replyTo = this.replyTo ? parseAddress(this.replyTo, "replyTo") : undefined;
    const message = buildMessage({
      from,
      to,
      cc,
      replyTo,
      subject: this.subject,
      ...(this.text ? { text: this.text } : {}),
      ...(this.html ? { html: this.html } : {}),
    });
    const recipients = [...new Set([...to, ...cc, ...bcc].map((recipient) => recipient.address))];
    const sent = await sendMail(
      {
        host: this.host,
        port: this.port ?? 587,
        security: this.security ?? "starttls",
        allowUntrustedCertificate: Boolean(this.allowUntrustedCertificate),
        username: this.username,
        password: this.password,
      },
      { from: from.address, recipients },
      message.text,
    );
    $.export("$summary", `Sent "${this.subject}" to ${recipients.length} recipient${recipients.length === 1 ? "" : "s"}`.slice(0, 200));
    return { messageId: message.messageId, accepted: sent.accepted, response: sent.response };
  },
};
