import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/** One message as the SMTP server received it. */
export interface ReceivedMail {
  /** The envelope: MAIL FROM and RCPT TO. */
  from: string | null;
  recipients: string[];
  /** Header names lower-cased; folded lines joined. */
  headers: Record<string, string>;
  subject: string;
  to: string;
  /** Everything after the header block, as sent (a multipart message keeps its parts). */
  body: string;
  raw: string;
}

export interface SmtpSink {
  port: number;
  /** `smtp://…` for RUNNEL_SMTP_URL, with credentials when given. */
  url(credentials?: { user: string; pass: string }): string;
  received: ReceivedMail[];
  /** Resolves once `count` messages have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Recipients the server refuses at RCPT TO (550), matched by a suffix such as "@nowhere.test". */
  rejectRecipientsEndingWith?: string;
  /** When set, AUTH succeeds only with these; a client that does not authenticate is still served. */
  credentials?: { user: string; pass: string };
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1 and a free port that keeps what
 * it receives. No STARTTLS (it would need a trusted certificate); AUTH is
 * allowed over the plain connection and optional.
 */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, callback) {
      const expected = options.credentials;
      if (expected && auth.username === expected.user && auth.password === expected.pass) return callback(null, { user: auth.username });
      const error = Object.assign(new Error("Invalid username or password"), { responseCode: 535 });
      callback(error);
    },
    onRcptTo(address, _session, callback) {
      const suffix = options.rejectRecipientsEndingWith;
      if (suffix && address.address.endsWith(suffix)) {
        return callback(Object.assign(new Error(`Mailbox ${address.address} does not exist`), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : null;
        received.push(parseMessage(raw, from, session.envelope.rcptTo.map((rcpt) => rcpt.address)));
        waiters.forEach((check) => check());
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    port,
    received,
    url(credentials) {
      const auth = credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@` : "";
      return `smtp://${auth}127.0.0.1:${port}`;
    },
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} mails, the SMTP server received ${received.length}`));
        }, timeoutMs);
        const check = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(received.slice(0, count));
        };
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Enough of RFC 5322 for tests: unfolded headers, and the body after the blank line. */
function parseMessage(raw: string, from: string | null, recipients: string[]): ReceivedMail {
  const split = raw.indexOf("\r\n\r\n");
  const head = split === -1 ? raw : raw.slice(0, split);
  const body = split === -1 ? "" : raw.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { from, recipients, headers, subject: headers.subject ?? "", to: headers.to ?? "", body, raw };
}
