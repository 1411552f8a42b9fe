/** The console's session cookie. */
export const SESSION_COOKIE = "runnel_session";

/** One cookie's value from a Cookie header, or null. Values are our own tokens (base64url), so no decoding is needed. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || null;
  }
  return null;
}

/** The Set-Cookie value that hands the browser a session: unreadable by scripts, never sent cross-site. */
export function sessionCookie(token: string, options: { secure: boolean; expiresAt: number }): string {
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Expires=${new Date(options.expiresAt).toUTCString()}${options.secure ? "; Secure" : ""}`;
}

/** The Set-Cookie value that makes the browser forget its session. */
export function clearedSessionCookie(options: { secure: boolean }): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0${options.secure ? "; Secure" : ""}`;
}
