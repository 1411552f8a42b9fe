import { Type, type Static } from "@sinclair/typebox";
import type { OutboxEntry } from "../../domain/outbox.js";
import { toEpochSeconds } from "./common.js";

export const OutboxMailSchema = Type.Object(
  {
    id: Type.String({ description: "mail_…" }),
    to: Type.Union([Type.String(), Type.Null()], { description: "The recipient; null when there was none to send to." }),
    subject: Type.String(),
    text: Type.String(),
    html: Type.Union([Type.String(), Type.Null()]),
    kind: Type.Union([Type.Literal("error-notification"), Type.Literal("send-email")]),
    workflow_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal("outbox"), Type.Literal("sent"), Type.Literal("failed")], {
      description: "outbox: recorded, not delivered (no SMTP server configured, or no recipient); sent; failed (see error).",
    }),
    error: Type.Union([Type.String(), Type.Null()], { description: "Why it was not delivered: the SMTP server's answer (failed), or that you have no e-mail address and how to set one (outbox)." }),
    created_at: Type.Integer({ description: "Epoch seconds." }),
    sent_at: Type.Union([Type.Integer(), Type.Null()]),
  },
  { title: "OutboxMail" },
);
export type OutboxMailView = Static<typeof OutboxMailSchema>;

export function toOutboxMailView(entry: OutboxEntry): OutboxMailView {
  return {
    id: entry.id,
    to: entry.to,
    subject: entry.subject,
    text: entry.text,
    html: entry.html,
    kind: entry.kind,
    workflow_id: entry.workflowId,
    status: entry.status,
    error: entry.error,
    created_at: toEpochSeconds(entry.createdAt),
    sent_at: entry.sentAt === null ? null : toEpochSeconds(entry.sentAt),
  };
}
