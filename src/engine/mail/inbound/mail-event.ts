import type { AddressObject, Attachment, ParsedMail } from "mailparser";

/**
 * The event an `email-new-email` source receives for one message: what
 * mailparser read, as plain JSON. Attachments carry their content as base64
 * while the message's attachments together stay under the content limit;
 * past it, an attachment keeps its name, type and size, `content: null`, and
 * `content_omitted` says why.
 */
export interface MailEvent {
  messageId: string | null;
  /** ISO 8601, from the Date header; null without a valid one. */
  date: string | null;
  subject: string;
  from: MailAddress | null;
  to: MailAddress[];
  cc: MailAddress[];
  replyTo: MailAddress[];
  /** Header names lower-cased; a header given more than once has its values joined by a line break. */
  headers: Record<string, string>;
  text: string | null;
  html: string | null;
  attachments: MailAttachment[];
  /** The SMTP envelope: who the sending server said the mail is from and for (Bcc included), and where it connected from. */
  envelope: { mailFrom: string | null; rcptTo: string[]; remoteAddress: string | null };
  receivedAt: string;
}

export interface MailAddress {
  address: string;
  name: string;
}

export interface MailAttachment {
  filename: string | null;
  contentType: string;
  size: number;
  contentId: string | null;
  /** inline (an image the HTML shows) or attachment. */
  disposition: string | null;
  content: string | null;
  content_omitted?: string;
}

/** The content of all a message's attachments together, before base64, that an event carries. */
export const MAX_ATTACHMENT_CONTENT_BYTES = 5 * 1024 * 1024;

export function mailEvent(parsed: ParsedMail, envelope: MailEvent["envelope"], receivedAt: Date): MailEvent {
  return {
    messageId: parsed.messageId ?? null,
    date: parsed.date && !Number.isNaN(parsed.date.getTime()) ? parsed.date.toISOString() : null,
    subject: parsed.subject ?? "",
    from: addresses(parsed.from)[0] ?? null,
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    replyTo: addresses(parsed.replyTo),
    headers: headersOf(parsed),
    text: parsed.text ?? null,
    html: typeof parsed.html === "string" ? parsed.html : null,
    attachments: attachmentsOf(parsed.attachments),
    envelope,
    receivedAt: receivedAt.toISOString(),
  };
}

function addresses(field: AddressObject | AddressObject[] | undefined): MailAddress[] {
  const objects = field === undefined ? [] : Array.isArray(field) ? field : [field];
  const found: MailAddress[] = [];
  const visit = (entries: AddressObject["value"]) => {
    for (const entry of entries) {
      // A group (`team: a@x, b@x;`) lists its members.
      if (entry.group) visit(entry.group);
      else if (entry.address) found.push({ address: entry.address, name: entry.name ?? "" });
    }
  };
  for (const object of objects) visit(object.value);
  return found;
}

/** Decoded where mailparser decoded the header to text, else its line as sent, unfolded. */
function headersOf(parsed: ParsedMail): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, line } of parsed.headerLines) {
    const name = key.toLowerCase();
    const decoded = parsed.headers.get(name);
    const raw = line.slice(line.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " ").trim();
    const value = typeof decoded === "string" && !(name in headers) ? decoded : raw;
    headers[name] = name in headers ? `${headers[name]}\n${raw}` : value;
  }
  return headers;
}

function attachmentsOf(attachments: Attachment[]): MailAttachment[] {
  let budget = MAX_ATTACHMENT_CONTENT_BYTES;
  return attachments.map((attachment) => {
    const size = attachment.content.length;
    const base = {
      filename: attachment.filename ?? null,
      contentType: attachment.contentType,
      size,
      contentId: attachment.contentId ?? null,
      disposition: attachment.contentDisposition ?? null,
    };
    if (size > budget) {
      return { ...base, content: null, content_omitted: `The message's attachments are over ${MAX_ATTACHMENT_CONTENT_BYTES / 1024 / 1024} MB together; this one's content is left out.` };
    }
    budget -= size;
    return { ...base, content: attachment.content.toString("base64") };
  });
}
