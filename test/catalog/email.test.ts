import { mkdtemp, rm } from "node:fs/promises";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import nodemailer, { type Transporter } from "nodemailer";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenOf } from "../../src/engine/mail/inbound/inbound-address.js";
import { mailEvent } from "../../src/engine/mail/inbound/mail-event.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.js";
import { deploySource, eventsOf, logsOf } from "../helpers/sources.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createWorkflow, runsOf, waitFor } from "../workflows/helpers.js";
import { codeOf, runAction, saveActionWorkflow } from "./catalog-b-harness.js";

/**
 * The catalog's e-mail components on a real server: "send yourself an
 * e-mail" into the outbox; "send an e-mail (SMTP)" through the sandbox's
 * network to a real SMTP server on loopback (test/helpers/smtp.ts), read back
 * with mailparser; and "new e-mail" receiving real SMTP (nodemailer) on the
 * server's own listener (RUNNEL_SMTP_LISTEN on a random loopback port).
 */

const CREDENTIALS = { user: "mailer", pass: "pa55-w0rd-xyz" };
let server: TestServer;
let sink: SmtpSink;
let key: string;
beforeAll(async () => {
  sink = await startSmtpSink({ credentials: CREDENTIALS, rejectRecipientsEndingWith: "@nowhere.test" });
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1", RUNNEL_SMTP_LISTEN: "127.0.0.1:0", RUNNEL_SMTP_MAX_MESSAGE_MB: "1" });
  key = (await createUser(server, "postie")).key;
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

const SEND_SMTP = "email/actions/send-email-with-smtp/send-email-with-smtp.mjs";

describe("email-send-email-to-self", () => {
  it("puts the mail in the owner's outbox with the run ($.send.email)", async () => {
    const run = await runAction(server, key, "email/actions/send-email-to-self/send-email-to-self.mjs", { subject: "Order {{steps.trigger.event.id}}", text: "Total 12", html: "<b>12</b>" }, { id: "o-9" });
    expect(run.status).toBe("success");
    expect(run.steps[0].sends).toEqual([expect.objectContaining({ destination: "email" })]);
    let mail: any;
    for (let tries = 0; tries < 100 && !mail; tries++) {
      const outbox = await call(server.url, "GET", "/v1/outbox?limit=100", { key });
      mail = outbox.body.data.find((item: any) => item.kind === "send-email" && item.subject === "Order o-9");
      if (!mail) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(mail).toMatchObject({ subject: "Order o-9", text: "Total 12", html: "<b>12</b>" });
    const refused = await saveActionWorkflow(server, key, "email/actions/send-email-to-self/send-email-to-self.mjs", { text: "no subject" });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.error)).toContain("subject");
  });
});

describe("email-send-email-with-smtp", () => {
  const base = { host: "127.0.0.1", security: "none", username: CREDENTIALS.user, password: CREDENTIALS.pass, from: "Shop Bot <shop@example.com>" };

  it("sends text and HTML with a UTF-8 subject, Cc in the header and Bcc only in the envelope, after logging in", async () => {
    const before = sink.received.length;
    const run = await runAction(server, key, SEND_SMTP, {
      ...base,
      port: sink.port,
      to: ["ada@example.com", "Bob Builder <bob@example.com>"],
      cc: ["cleo@example.com"],
      bcc: ["hidden@example.com"],
      replyTo: "help@example.com",
      subject: "Bestellung Nr. {{steps.trigger.event.n}} – grüße ✓",
      text: "Line one\n.line starting with a dot\nDanke",
      html: "<p>Danke für <b>{{steps.trigger.event.n}}</b></p>",
    }, { n: 7 });
    expect(run.status, JSON.stringify(run.error)).toBe("success");
    expect(run.steps[0].$return_value).toMatchObject({ accepted: ["ada@example.com", "bob@example.com", "cleo@example.com", "hidden@example.com"], response: expect.stringMatching(/^250/) });
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    expect(mail!.from).toBe("shop@example.com");
    expect(mail!.recipients).toEqual(["ada@example.com", "bob@example.com", "cleo@example.com", "hidden@example.com"]);
    const parsed = await simpleParser(mail!.raw);
    expect(parsed.subject).toBe("Bestellung Nr. 7 – grüße ✓");
    expect(parsed.from?.value).toEqual([{ address: "shop@example.com", name: "Shop Bot" }]);
    expect((parsed.to as any).value.map((entry: any) => entry.address)).toEqual(["ada@example.com", "bob@example.com"]);
    expect((parsed.cc as any).value.map((entry: any) => entry.address)).toEqual(["cleo@example.com"]);
    expect(mail!.raw).not.toContain("hidden@example.com");
    expect((parsed.replyTo as any).value[0].address).toBe("help@example.com");
    expect(parsed.text?.trim()).toBe("Line one\n.line starting with a dot\nDanke");
    expect(parsed.html).toBe("<p>Danke für <b>7</b></p>");
    expect(parsed.messageId).toBe(run.steps[0].$return_value.messageId);
  });

  it("names what went wrong: a refused login (without the password), a refused recipient, no STARTTLS, a closed port", async () => {
    const wrongPassword = await runAction(server, key, SEND_SMTP, { ...base, port: sink.port, password: "not-it", to: ["a@example.com"], subject: "x", text: "x" });
    expect(wrongPassword.status).toBe("error");
    expect(wrongPassword.error.msg).toMatch(/refused the user name or password .*535.*Check the user name and password/);
    expect(wrongPassword.error.msg).not.toContain("not-it");

    const refusedRecipient = await runAction(server, key, SEND_SMTP, { ...base, port: sink.port, to: ["a@example.com", "ghost@nowhere.test"], subject: "x", text: "x" });
    expect(refusedRecipient.error.msg).toMatch(/refused the recipient ghost@nowhere\.test \(550 .*\)\. Nothing was sent/);

    const noStartTls = await runAction(server, key, SEND_SMTP, { ...base, security: "starttls", port: sink.port, to: ["a@example.com"], subject: "x", text: "x" });
    expect(noStartTls.error.msg).toContain("does not offer STARTTLS");

    const closed = await runAction(server, key, SEND_SMTP, { ...base, port: 1, to: ["a@example.com"], subject: "x", text: "x" });
    expect(closed.error.msg).toMatch(/Could not connect to 127\.0\.0\.1:1/);
  });

  it("encrypts: STARTTLS on the submission port and TLS from the start, refusing an untrusted certificate unless told to accept it", async () => {
    // smtp-server's own self-signed certificate: untrusted, as an internal server's often is.
    const received: string[] = [];
    const start = async (secure: boolean) => {
      const tlsServer = new SMTPServer({
        secure,
        authOptional: true,
        logger: false,
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on("data", (chunk: Buffer) => chunks.push(chunk));
          stream.on("end", () => {
            received.push(`${session.secure ? "secure" : "plain"} ${Buffer.concat(chunks).toString("utf8")}`);
            callback();
          });
        },
      });
      await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", () => resolve()));
      return tlsServer;
    };
    const [startTls, implicitTls] = await Promise.all([start(false), start(true)]);
    try {
      const props = { host: "127.0.0.1", from: "a@example.com", to: ["b@example.com"], subject: "over TLS", text: "secret stuff" };
      const portOf = (smtp: SMTPServer) => (smtp.server.address() as AddressInfo).port;
      const untrusted = await runAction(server, key, SEND_SMTP, { ...props, port: portOf(startTls) });
      expect(untrusted.status).toBe("error");
      expect(untrusted.error.msg).toMatch(/TLS with the SMTP server 127\.0\.0\.1:\d+ failed: .*certificate/i);
      const viaStartTls = await runAction(server, key, SEND_SMTP, { ...props, port: portOf(startTls), allowUntrustedCertificate: true });
      expect(viaStartTls.status, JSON.stringify(viaStartTls.error)).toBe("success");
      const viaTls = await runAction(server, key, SEND_SMTP, { ...props, port: portOf(implicitTls), security: "tls", allowUntrustedCertificate: true });
      expect(viaTls.status, JSON.stringify(viaTls.error)).toBe("success");
      expect(received).toHaveLength(2);
      for (const mail of received) {
        expect(mail.startsWith("secure ")).toBe(true);
        expect((await simpleParser(mail.slice("secure ".length))).subject).toBe("over TLS");
      }
    } finally {
      await Promise.all([startTls, implicitTls].map((smtp) => new Promise<void>((resolve) => smtp.close(() => resolve()))));
    }
  });

  it("refuses bad props: an address that is not one, no body, a line break in the subject, a port out of range, a security it does not know", async () => {
    const props = { ...base, port: sink.port, subject: "x", text: "x" };
    expect((await runAction(server, key, SEND_SMTP, { ...props, to: ["not an address"] })).error.msg).toContain('Prop "to[0]" has "not an address", which is not an e-mail address');
    expect((await runAction(server, key, SEND_SMTP, { ...props, to: ["a@example.com"], text: "" })).error.msg).toContain('Props "text" and "html" are both empty');
    expect((await runAction(server, key, SEND_SMTP, { ...props, to: ["a@example.com"], subject: "{{steps.trigger.event.s}}" }, { s: "a\r\nBcc: evil@example.com" })).error.msg).toContain('Prop "subject" must be one line');
    expect((await runAction(server, key, SEND_SMTP, { ...props, to: ["a@example.com"], from: "x@y\nBcc: z@w" })).error.msg).toContain('Prop "from" must be one line');
    const badPort = await saveActionWorkflow(server, key, SEND_SMTP, { ...props, to: ["a@example.com"], port: 70000 });
    expect(badPort.status).toBe(400);
    expect(JSON.stringify(badPort.body.error)).toContain("port");
    const badSecurity = await saveActionWorkflow(server, key, SEND_SMTP, { ...props, to: ["a@example.com"], security: "ssl" });
    expect(badSecurity.status).toBe(400);
    expect(JSON.stringify(badSecurity.body.error)).toContain("security");
  });
});

describe("email-new-email: Runnel's own SMTP listener", () => {
  let source: any;
  let token: string;
  let transport: Transporter;
  const address = () => `${token}@inbound.example.test`;

  beforeAll(async () => {
    expect(server.server.inboundMail).toEqual({ host: "127.0.0.1", port: expect.any(Number) });
    source = await deploySource(server, key, { component_code: await codeOf("email/sources/new-email/new-email.mjs"), name: "inbox" });
    token = new URL(source.configured_props.http.endpoint_url).pathname.split("/").pop()!;
    // The source tells its address when it is deployed: the token at the server's host.
    expect((await logsOf(server, key, source.id)).join("\n")).toContain(`Send e-mail to ${token}@127.0.0.1`);
    transport = nodemailer.createTransport({ host: "127.0.0.1", port: server.server.inboundMail!.port, secure: false, ignoreTLS: true, tls: { rejectUnauthorized: false } });
  });
  afterAll(() => transport.close());

  it("emits each message with sender, recipients, subject, text, HTML, headers and attachments (base64), once it is stored", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");
    const sent = await transport.sendMail({
      from: "Ada Lovelace <ada@example.com>",
      to: `Inbox <${address()}>`,
      cc: "cleo@example.com",
      subject: "Invoice Nº 42 ✓",
      text: "Please find the invoice attached.",
      html: '<p>Please find the invoice attached. <img src="cid:logo@x"></p>',
      headers: { "X-Order": "42" },
      attachments: [
        { filename: "invoice.txt", content: "total: 12 EUR", contentType: "text/plain" },
        { filename: "logo.png", content: png, contentType: "image/png", cid: "logo@x" },
      ],
    });
    expect(sent.response).toMatch(/^250 .*Delivered to 1 source/);
    // 250 came after the event was stored: it is there now, without waiting.
    const [stored] = await eventsOf(server, key, source.id);
    expect(stored.metadata?.summary ?? stored.summary).toBe("ada@example.com: Invoice Nº 42 ✓");
    const event = stored.event;
    expect(event).toMatchObject({
      messageId: sent.messageId,
      subject: "Invoice Nº 42 ✓",
      from: { address: "ada@example.com", name: "Ada Lovelace" },
      to: [{ address: address(), name: "Inbox" }],
      cc: [{ address: "cleo@example.com", name: "" }],
      text: "Please find the invoice attached.",
      html: '<p>Please find the invoice attached. <img src="cid:logo@x"></p>',
      // cleo@example.com is no mailbox here: refused at RCPT TO, so not in the envelope.
      envelope: { mailFrom: "ada@example.com", rcptTo: [address()], remoteAddress: "127.0.0.1" },
    });
    expect(event.headers["x-order"]).toBe("42");
    expect(event.headers.subject).toBe("Invoice Nº 42 ✓");
    expect(Date.parse(event.date)).not.toBeNaN();
    expect(sent.rejected).toEqual(["cleo@example.com"]);
    const byName = [...event.attachments].sort((a: any, b: any) => a.filename.localeCompare(b.filename));
    expect(byName).toEqual([
      { filename: "invoice.txt", contentType: "text/plain", size: 13, contentId: null, disposition: "attachment", content: Buffer.from("total: 12 EUR").toString("base64") },
      { filename: "logo.png", contentType: "image/png", size: png.length, contentId: "<logo@x>", disposition: "inline", content: png.toString("base64") },
    ]);
  });

  it("emits a message its sender sends again (same Message-ID) once, and takes a +tag after the token", async () => {
    const messageId = `<again-${Date.now()}@example.com>`;
    for (let i = 0; i < 2; i++) await transport.sendMail({ from: "a@example.com", to: `${token}+orders@inbound.example.test`, subject: "twice", text: "x", messageId });
    const events = await eventsOf(server, key, source.id);
    expect(events.filter((item: any) => item.event.subject === "twice")).toHaveLength(1);
  });

  it("refuses unknown recipients at RCPT TO (550), and so the tokens of sources that are not inboxes", async () => {
    const unknown = await transport.sendMail({ from: "a@example.com", to: "AAAAAAAAAAAAAAAAAAAAAAAA@inbound.example.test", subject: "x", text: "x" }).catch((error: any) => error);
    expect(unknown.responseCode).toBe(550);
    expect(unknown.message).toContain("No mailbox AAAAAAAAAAAAAAAAAAAAAAAA@inbound.example.test here");
    const webhook = await deploySource(server, key, { component_code: 'export default { name: "hook", version: "0.1.0", props: { http: "$.interface.http" }, async run(e) { this.$emit(e.body); } }', name: "hook" });
    const hookToken = new URL(webhook.configured_props.http.endpoint_url).pathname.split("/").pop();
    const notInbox = await transport.sendMail({ from: "a@example.com", to: `${hookToken}@inbound.example.test`, subject: "x", text: "x" }).catch((error: any) => error);
    expect(notInbox.responseCode).toBe(550);
    // One good recipient among bad ones: the message goes to the good one only.
    const mixed = await transport.sendMail({ from: "a@example.com", to: [address(), "nobody@inbound.example.test"], subject: "mixed", text: "x" });
    expect(mixed.rejected).toEqual(["nobody@inbound.example.test"]);
    expect((await eventsOf(server, key, source.id)).some((item: any) => item.event.subject === "mixed")).toBe(true);
  });

  it("refuses a message over RUNNEL_SMTP_MAX_MESSAGE_MB with 552, and its endpoint takes no HTTP requests", async () => {
    const tooBig = await transport
      .sendMail({ from: "a@example.com", to: address(), subject: "big", text: "x", attachments: [{ filename: "big.bin", content: Buffer.alloc(1024 * 1024, 7) }] })
      .catch((error: any) => error);
    expect(tooBig.responseCode).toBe(552);
    expect(tooBig.message).toContain("Message too big: this server takes messages of up to 1 MB");
    const posted = await fetch(source.configured_props.http.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ subject: "forged" }) });
    expect(posted.status).toBe(405);
    expect(((await posted.json()) as { error: string }).error).toContain("This source takes e-mail, not HTTP requests");
    expect((await eventsOf(server, key, source.id)).some((item: any) => ["big", "forged"].includes(item.event.subject))).toBe(false);
  });

  it("survives hostile messages: a huge header is refused with 554, malformed MIME is read as well as it can be, and mail still flows", async () => {
    const envelope = { from: "a@example.com", to: [address()] };
    const hugeHeader = `X-Junk: ${"a".repeat(300 * 1024)}\r\nSubject: huge\r\n\r\nbody\r\n`;
    const refused = await transport.sendMail({ envelope, raw: hugeHeader }).catch((error: any) => error);
    expect(refused.responseCode).toBe(554);
    expect(refused.message).toContain("The message could not be read");

    const malformed = [
      "Subject: broken mime",
      'Content-Type: multipart/mixed; boundary="never-closed"',
      "",
      "--never-closed",
      "Content-Type: text/plain; charset=x-unknown-charset",
      "Content-Transfer-Encoding: base64",
      "",
      "!!!not base64!!!",
      "--never-closed",
      "Content-Type: application/octet-stream; name=\"a.bin\"",
      "Content-Transfer-Encoding: quoted-printable",
      "Content-Disposition: attachment; filename*=utf-8''%E2%9C%93%ZZ.bin",
      "",
      "=ZZ=0",
      "",
    ].join("\r\n");
    // Unclosed boundary, unknown charset, bad base64 and quoted-printable, a broken filename: taken, read as far as it goes.
    expect((await transport.sendMail({ envelope, raw: malformed })).response).toMatch(/^250/);
    const broken = (await eventsOf(server, key, source.id)).find((item: any) => item.event.subject === "broken mime")!.event;
    expect(broken).toMatchObject({ messageId: null, date: null, from: null, to: [], html: null, text: expect.any(String) });
    expect(broken.attachments).toEqual([expect.objectContaining({ contentType: "application/octet-stream", disposition: "attachment", content: expect.any(String) })]);

    const after = await transport.sendMail({ from: "a@example.com", to: address(), subject: "still alive", text: "ok" });
    expect(after.response).toMatch(/^250/);
    expect((await eventsOf(server, key, source.id)).some((item: any) => item.event.subject === "still alive")).toBe(true);
  });

  it("keeps transactions apart on one connection (RSET drops the recipients so far) and caps recipients per message", async () => {
    const other = await deploySource(server, key, { component_code: await codeOf("email/sources/new-email/new-email.mjs"), name: "inbox-2" });
    const otherToken = new URL(other.configured_props.http.endpoint_url).pathname.split("/").pop()!;
    const dialog = await smtpDialog(server.server.inboundMail!.port);
    try {
      expect(await dialog.say("EHLO tester")).toMatch(/^250/);
      expect(await dialog.say("MAIL FROM:<a@example.com>")).toMatch(/^250/);
      expect(await dialog.say(`RCPT TO:<${address()}>`)).toMatch(/^250/);
      expect(await dialog.say("RSET")).toMatch(/^250/);
      expect(await dialog.say("MAIL FROM:<a@example.com>")).toMatch(/^250/);
      expect(await dialog.say(`RCPT TO:<${otherToken}@inbound.example.test>`)).toMatch(/^250/);
      expect(await dialog.say("DATA")).toMatch(/^354/);
      expect(await dialog.say("Subject: after rset\r\n\r\nhello\r\n.")).toMatch(/^250 .*Delivered to 1 source/);
      expect(await dialog.say("MAIL FROM:<a@example.com>")).toMatch(/^250/);
      const answers: string[] = [];
      for (let i = 0; i < 21; i++) answers.push(await dialog.say(`RCPT TO:<${otherToken}+${i}@inbound.example.test>`));
      expect(answers.slice(0, 20).every((answer) => answer.startsWith("250"))).toBe(true);
      expect(answers[20]).toMatch(/^452 .*too many recipients/i);
    } finally {
      dialog.close();
    }
    expect((await eventsOf(server, key, other.id)).map((item: any) => item.event.subject)).toEqual(["after rset"]);
    expect((await eventsOf(server, key, source.id)).some((item: any) => item.event.subject === "after rset")).toBe(false);
  });

  it("triggers a workflow: a mail to the trigger's address runs its steps with the message", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Mail to workflow",
      trigger: { component_code: await codeOf("email/sources/new-email/new-email.mjs") },
      steps: [{ name: "read", code: "export default defineComponent({ async run({ steps }) { const m = steps.trigger.event; return m.from.address + ' wrote ' + m.subject; } })" }],
    });
    const triggerToken = new URL(workflow.trigger.endpoint_url).pathname.split("/").pop();
    await transport.sendMail({ from: "grace@example.com", to: `${triggerToken}@inbound.example.test`, subject: "hello workflow", text: "hi" });
    const [run] = await waitFor(() => runsOf(server, key, workflow.id), (runs) => runs.length === 1, "the run of the mail");
    expect(run.steps[0]).toMatchObject({ status: "success", $return_value: "grace@example.com wrote hello workflow" });
  });

  it("stops the start with a message naming RUNNEL_SMTP_LISTEN when its port is taken", async () => {
    const taken = server.server.inboundMail!.port;
    const dataDir = await mkdtemp(join(tmpdir(), "runnel-smtp-taken-"));
    try {
      await expect(startTestServer({ RUNNEL_SMTP_LISTEN: `127.0.0.1:${taken}` }, { dataDir })).rejects.toThrow(`RUNNEL_SMTP_LISTEN: port ${taken} on 127.0.0.1 is already in use`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("carries attachments' content up to 5 MB together; past it, an attachment keeps its name, type and size and says why it has no content", async () => {
    const attachment = (filename: string, megabytes: number) => `--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="${filename}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.alloc(megabytes * 1024 * 1024, 1).toString("base64").replace(/.{76}/g, "$&\r\n")}\r\n`;
    const raw = `Subject: big attachments\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${attachment("a.bin", 3)}${attachment("b.bin", 3)}--b--\r\n`;
    const event = mailEvent(await simpleParser(raw), { mailFrom: null, rcptTo: [], remoteAddress: null }, new Date(0));
    expect(event.attachments.map(({ content, ...rest }) => ({ ...rest, content: content === null ? null : Buffer.from(content, "base64").length }))).toEqual([
      { filename: "a.bin", contentType: "application/octet-stream", size: 3 * 1024 * 1024, contentId: null, disposition: "attachment", content: 3 * 1024 * 1024 },
      { filename: "b.bin", contentType: "application/octet-stream", size: 3 * 1024 * 1024, contentId: null, disposition: "attachment", content: null, content_omitted: "The message's attachments are over 5 MB together; this one's content is left out." },
    ]);
  });

  it("reads the token from an address: the domain when RUNNEL_SMTP_DOMAIN is set, a +tag, and no token at all", () => {
    expect(tokenOf("Abc_def-12345678@any.example", null)).toEqual({ ok: true, token: "Abc_def-12345678" });
    expect(tokenOf("Abc_def-12345678+tag@MAIL.example.com", "mail.example.com")).toEqual({ ok: true, token: "Abc_def-12345678" });
    expect(tokenOf("Abc_def-12345678@other.example", "mail.example.com")).toEqual({ ok: false, reason: "This server takes mail for @mail.example.com only, not @other.example" });
    expect(tokenOf("short@x.example", null)).toMatchObject({ ok: false });
    expect(tokenOf("no-at-sign", null)).toMatchObject({ ok: false });
  });
});

/** A raw SMTP conversation: each `say` sends a line and resolves with the server's (last) reply line. */
async function smtpDialog(port: number): Promise<{ say(line: string): Promise<string>; close(): void }> {
  const socket = connect({ host: "127.0.0.1", port });
  socket.setEncoding("utf8");
  let buffer = "";
  let waiting: ((line: string) => void) | null = null;
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split("\r\n");
    buffer = lines.pop()!;
    const last = lines.filter((line) => /^\d{3} /.test(line)).pop();
    if (last && waiting) {
      const resolve = waiting;
      waiting = null;
      resolve(last);
    }
  });
  const next = () => new Promise<string>((resolve) => (waiting = resolve));
  await next(); // the greeting
  return {
    say(line) {
      const reply = next();
      socket.write(`${line}\r\n`);
      return reply;
    },
    close: () => socket.destroy(),
  };
}
