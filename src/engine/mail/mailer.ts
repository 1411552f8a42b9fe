import { cutAtWord } from "../../domain/error-text.js";
import type { Transporter } from "nodemailer";
import type { Logger } from "pino";
import { SET_EMAIL_HINT } from "../../domain/accounts.js";
import { keyedId, newId } from "../../domain/ids.js";
import type { MailKind, OutboxEntry } from "../../domain/outbox.js";
import type { Store } from "../../store/store.js";

export interface MailerOptions {
  store: Store;
  /** `smtp://…` or `smtps://…`; null: mails are recorded in the outbox and not delivered. */
  smtpUrl: string | null;
  /** The From header of every mail. */
  from: string;
  logger: Logger;
  now?: () => number;
}

export interface OutgoingMail {
  ownerId: string;
  /** The recipient; null keeps the mail in the outbox (there is nobody to send it to). */
  to: string | null;
  subject: string;
  text: string;
  html?: string | null | undefined;
  kind: MailKind;
  workflowId?: string | null | undefined;
  /**
   * Makes sending safe to repeat (a `$.send.email` attempt after a crash):
   * the mail is recorded under an id made from the key and `createdAt`, and
   * one already sent under it is not sent again.
   */
  idempotencyKey?: string | undefined;
  createdAt?: number | undefined;
}

/** The outbox's note on a mail whose owner has no address. */
const NO_ADDRESS = `Not sent: you have no e-mail address. ${SET_EMAIL_HINT}`;

/** How long to wait for the SMTP server to accept a connection and greet. */
const CONNECT_TIMEOUT_MS = 10_000;
/** How long a quiet connection may stay open in the middle of a conversation. */
const SOCKET_TIMEOUT_MS = 30_000;
/** An SMTP answer can be long (a multi-line 5xx); the outbox keeps the start of it. */
const MAX_ERROR_LENGTH = 1_000;

/**
 * The mail room. Every mail is recorded in the owner's outbox first, so it is
 * durable and visible whatever happens next; then, when an SMTP server is
 * configured and the mail has a recipient, it is delivered over one pooled
 * connection and marked `sent` or `failed`. A delivery failure is recorded,
 * never thrown: only a failed store write reaches the caller.
 */
export class Mailer {
  private readonly store: Store;
  private readonly smtpUrl: string | null;
  private readonly from: string;
  private readonly logger: Logger;
  private readonly now: () => number;
  /** The password (as written and decoded), to keep it out of recorded errors whatever the SMTP library says. */
  private readonly secrets: string[];
  private transport: Transporter | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(options: MailerOptions) {
    this.store = options.store;
    this.smtpUrl = options.smtpUrl;
    this.from = options.from;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.secrets = passwordsIn(options.smtpUrl);
  }

  /** Whether mails are delivered (an SMTP server is configured), or only recorded. */
  get delivers(): boolean {
    return this.smtpUrl !== null;
  }

  /** A mail to the owner's own address (kept in the outbox when the account has none). */
  async sendToOwner(mail: Omit<OutgoingMail, "to">): Promise<OutboxEntry> {
    const to = (await this.store.findUser(mail.ownerId))?.email ?? null;
    return this.send({ ...mail, to });
  }

  /** Records the mail, then delivers it when it can; resolves with the outbox entry as it ends up. */
  async send(mail: OutgoingMail): Promise<OutboxEntry> {
    const createdAt = mail.createdAt ?? this.now();
    const entry = await this.store.addMail({
      id: mail.idempotencyKey === undefined ? newId("mail", createdAt) : keyedId("mail", createdAt, mail.idempotencyKey),
      ownerId: mail.ownerId,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html ?? null,
      kind: mail.kind,
      workflowId: mail.workflowId ?? null,
      status: "outbox",
      // A mail to nobody says so where its owner looks (the outbox), with what to do.
      error: mail.to === null ? NO_ADDRESS : null,
      createdAt,
      sentAt: null,
    });
    if (entry.to === null) {
      this.logger.warn({ mailId: entry.id, ownerId: entry.ownerId, kind: entry.kind, workflowId: entry.workflowId }, `mail not sent: its owner has no e-mail address. ${SET_EMAIL_HINT}`);
      return entry;
    }
    // Sent already by an earlier attempt under the same key: once is enough.
    if (this.smtpUrl === null || this.closed || entry.status === "sent") return entry;

    const delivery = this.deliver(entry);
    this.inFlight.add(delivery);
    try {
      return await delivery;
    } finally {
      this.inFlight.delete(delivery);
    }
  }

  /** Waits for deliveries in flight, then closes the SMTP connections. Later sends only record. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    this.transport?.close();
    this.transport = null;
  }

  private async deliver(entry: OutboxEntry): Promise<OutboxEntry> {
    let error: string | null = null;
    try {
      await (await this.transportFor()).sendMail({
        from: this.from,
        to: entry.to!,
        subject: entry.subject,
        text: entry.text,
        ...(entry.html !== null ? { html: entry.html } : {}),
      });
    } catch (thrown) {
      error = this.describe(thrown);
    }
    if (error === null) {
      const sentAt = this.now();
      await this.store.markMail(entry.id, { status: "sent", sentAt });
      return { ...entry, status: "sent", sentAt };
    }
    this.logger.warn({ mailId: entry.id, ownerId: entry.ownerId, kind: entry.kind, error }, "mail delivery failed");
    await this.store.markMail(entry.id, { status: "failed", error });
    return { ...entry, status: "failed", error };
  }

  /** nodemailer is loaded with the first delivery: most servers never send a mail, and every start would pay for it. */
  private async transportFor(): Promise<Transporter> {
    if (this.transport) return this.transport;
    const { default: nodemailer } = await import("nodemailer");
    this.transport ??= nodemailer.createTransport({
      pool: true,
      url: this.smtpUrl!,
      maxConnections: 2,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      greetingTimeout: CONNECT_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
    });
    return this.transport;
  }

  /** The SMTP server's answer or the connection problem, in one line, without the password. */
  private describe(thrown: unknown): string {
    const error = thrown instanceof Error ? (thrown as Error & { code?: unknown; response?: unknown }) : null;
    let message = error ? error.message : String(thrown);
    if (error && typeof error.code === "string" && !message.includes(error.code)) message = `${error.code}: ${message}`;
    for (const secret of this.secrets) message = message.split(secret).join("***");
    message = message.replace(/\s+/g, " ").trim() || "unknown SMTP error";
    return cutAtWord(message, MAX_ERROR_LENGTH);
  }
}

/** The calendar day of `ms` in UTC, as `YYYY-MM-DD`: the period of the once-a-day error notice. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function passwordsIn(smtpUrl: string | null): string[] {
  if (!smtpUrl) return [];
  try {
    const { password } = new URL(smtpUrl);
    if (!password) return [];
    let decoded = password;
    try {
      decoded = decodeURIComponent(password);
    } catch {
      // Not valid percent-encoding: the password is used as written.
    }
    // Longest first, so a decoded form that contains the encoded one is masked whole.
    return [...new Set([password, decoded])].filter((secret) => secret.length >= 3).sort((a, b) => b.length - a.length);
  } catch {
    return [];
  }
}
