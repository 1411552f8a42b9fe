/**
 * Inbound mail addresses: `<token>@<domain>`, where the token is the
 * endpoint token of an `email-new-email` source (unguessable, 24 characters
 * of base64url) and the domain is RUNNEL_SMTP_DOMAIN, or any when it is not
 * set. A `+tag` after the token is allowed and ignored
 * (`<token>+orders@…`), as mail providers do.
 */

/** The component key whose sources receive mail; a user's own code may take it too. */
export const INBOUND_MAIL_KEY = "email-new-email";

export type AddressVerdict = { ok: true; token: string } | { ok: false; reason: string };

/** The token an address names, or why it names none here (the text of a 550). */
export function tokenOf(address: string, domain: string | null): AddressVerdict {
  const at = address.lastIndexOf("@");
  if (at <= 0) return { ok: false, reason: `${address} is not an address this server takes mail for` };
  const local = address.slice(0, at);
  const addressDomain = address.slice(at + 1).toLowerCase().replace(/\.$/, "");
  if (domain !== null && addressDomain !== domain) {
    return { ok: false, reason: `This server takes mail for @${domain} only, not @${addressDomain}` };
  }
  const token = local.split("+")[0]!;
  if (!/^[A-Za-z0-9_-]{8,64}$/.test(token)) return { ok: false, reason: `No mailbox ${address} here` };
  return { ok: true, token };
}

/** The address of a source with this endpoint token, as people are told it. */
export function inboundAddress(token: string, domain: string): string {
  return `${token}@${domain}`;
}
