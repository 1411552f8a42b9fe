import type { FastifyInstance, FastifyRequest } from "fastify";
import { ForbiddenError, UnauthorizedError } from "../domain/errors.js";
import type { Accounts } from "../engine/accounts.js";
import type { Sessions } from "../engine/sessions.js";
import { readCookie, SESSION_COOKIE } from "./cookies.js";
import "./request-context.js";

export interface AuthOptions {
  accounts: Accounts;
  /** The console's sessions: a session cookie then authenticates like the key it was made with. */
  sessions?: Sessions;
  /** The server's public address (RUNNEL_PUBLIC_URL or where it listens): an origin a cookie's unsafe request may come from. */
  publicUrl?: () => string;
  /** Paths under the prefix that need no key (the OpenAPI document). */
  publicPaths: ReadonlySet<string>;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Requires `Authorization: Bearer <key>` (or the console's session cookie) on
 * every route of the instance it is added to, before the body is read, and
 * records the caller on the request.
 */
export function addBearerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.decorateRequest("principal", null);
  app.addHook("onRequest", async (request: FastifyRequest) => {
    if (options.publicPaths.has(request.routeOptions.url ?? "")) return;
    const session = options.sessions && !request.headers.authorization ? readCookie(request.headers.cookie, SESSION_COOKIE) : null;
    if (session && options.sessions) {
      // SameSite=Strict already keeps other sites' requests from carrying the cookie; this holds even where it does not.
      if (!SAFE_METHODS.has(request.method)) requireOwnOrigin(request, options.publicUrl?.() ?? "");
      request.principal = await options.sessions.authenticate(session);
      return;
    }
    request.principal = await options.accounts.authenticate(bearerSecret(request.headers.authorization));
  });
}

/**
 * Refuses a request whose Origin (or, without one, Referer) is not this
 * server: the address it was reached at (Host) or its public URL.
 */
export function requireOwnOrigin(request: FastifyRequest, publicUrl: string): void {
  const from = request.headers.origin ?? originOf(request.headers.referer);
  if (from && isOwnOrigin(request, from, publicUrl)) return;
  throw new ForbiddenError(
    from
      ? `A request signed in with the console's session must come from the console itself; this one came from ${from}. Use an API key (Authorization: Bearer) from other places.`
      : "A request signed in with the console's session must say where it comes from (Origin header). Use an API key (Authorization: Bearer) from scripts.",
  );
}

/** Whether an Origin header names this server (its Host, as reached, or its public URL). */
export function isOwnOrigin(request: FastifyRequest, origin: string, publicUrl: string): boolean {
  const host = request.headers.host;
  const own = new Set<string>();
  if (host) {
    own.add(`http://${host}`);
    own.add(`https://${host}`);
  }
  const publicOrigin = originOf(publicUrl);
  if (publicOrigin) own.add(publicOrigin);
  return own.has(origin.toLowerCase());
}

function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? null : origin.toLowerCase();
  } catch {
    return null;
  }
}

/** The key of an `Authorization: Bearer <key>` header; a clear 401 when there is none or it has another form. */
export function bearerSecret(header: string | undefined): string {
  if (!header) {
    throw new UnauthorizedError("An API key is required: send the header `Authorization: Bearer <API key>`.");
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw new UnauthorizedError("The Authorization header must be `Bearer <API key>`.");
  }
  return match[1];
}
