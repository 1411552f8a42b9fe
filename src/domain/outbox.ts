/** What a mail is for: a workflow's error notice to its owner, or a step's `$.send.email`. */
export type MailKind = "error-notification" | "send-email";

/** `outbox`: recorded, not (yet) delivered (no SMTP configured, or no recipient); `sent`; `failed` (with `error`). */
export type MailStatus = "outbox" | "sent" | "failed";

export const MAIL_KINDS: readonly MailKind[] = ["error-notification", "send-email"];
export const MAIL_STATUSES: readonly MailStatus[] = ["outbox", "sent", "failed"];

/**
 * One mail in a user's outbox. Every mail is recorded here before it is
 * delivered, so the outbox shows what was sent, what failed and why, and what
 * waits for an SMTP server.
 */
export interface OutboxEntry {
  id: string; // mail_…
  ownerId: string;
  /** The recipient; null when there is none to send to (the mail stays in the outbox). */
  to: string | null;
  subject: string;
  text: string;
  html: string | null;
  kind: MailKind;
  /** The workflow that sent it or that failed, when there is one. */
  workflowId: string | null;
  status: MailStatus;
  /** Why it was not delivered: the SMTP server's answer (`failed`), or that its owner has no address (`outbox`, with how to set one); else null. */
  error: string | null;
  createdAt: number;
  sentAt: number | null;
}
