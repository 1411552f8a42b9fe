import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { OAuthCallbackError, type AppAccountsService, type PendingOAuthFlow } from "../../engine/apps/app-accounts-service.js";
import type { Sessions } from "../../engine/sessions.js";
import { isOwnOrigin } from "../auth.js";
import { readCookie, SESSION_COOKIE } from "../cookies.js";

export interface OAuthPagesOptions {
  appAccounts: AppAccountsService;
  sessions: Sessions;
  /** The server's public address: the origin the confirm form must be posted from, and whether cookies are Secure. */
  publicUrl: () => string;
}

/** A connection's binding cookie lives as long as a connection may take (OAUTH_FLOW_TTL_MS). */
const BINDING_MAX_AGE_SECONDS = 10 * 60;

/**
 * The browser's side of connecting an OAuth account, outside /v1 and without
 * a key (the one-time state says whose connection it is):
 * - GET /oauth/authorize?state=…: the address `POST /v1/accounts/oauth/start`
 *   answers. In a browser signed in to the console as the starter, it goes
 *   straight on to the provider; elsewhere it first asks the person to
 *   confirm, naming the Runnel user the account would be connected to, so
 *   that a link sent by someone else is seen for what it is.
 * - POST /oauth/authorize: the confirmation (from this server's own page
 *   only: Origin checked), then on to the provider.
 * - GET /oauth/callback: where the provider sends the browser back; it
 *   connects the account only in the browser that went through
 *   /oauth/authorize (OAuthBrowserBinding).
 * Every answer is a small page for the person at the browser, never framed.
 */
export const oauthPagesRoutes: FastifyPluginAsync<OAuthPagesOptions> = async (app, { appAccounts, sessions, publicUrl }) => {
  // The confirmation is a plain HTML form; this parser is registered for these routes only.
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 4096 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const secure = () => publicUrl().startsWith("https:");

  const goToProvider = (reply: FastifyReply, flow: PendingOAuthFlow) =>
    reply
      .header("set-cookie", `${appAccounts.binding.cookieName(flow.stateHash)}=${appAccounts.binding.valueFor(flow.stateHash)}; HttpOnly; SameSite=Lax; Path=/oauth; Max-Age=${BINDING_MAX_AGE_SECONDS}${secure() ? "; Secure" : ""}`)
      .redirect(flow.providerUrl, 303);

  app.get("/oauth/authorize", { schema: { hide: true } }, async (request, reply) => {
    pageHeaders(reply);
    const state = (request.query as Record<string, unknown>).state;
    let flow: PendingOAuthFlow;
    try {
      flow = await appAccounts.pendingFlow(state);
    } catch (error) {
      if (error instanceof OAuthCallbackError) return reply.code(400).send(page("The account cannot be connected", error.message));
      throw error;
    }
    if (await signedInAs(request, sessions, flow.ownerId)) return goToProvider(reply, flow);
    return reply.code(200).send(confirmPage(flow, state as string));
  });

  app.post("/oauth/authorize", { schema: { hide: true } }, async (request, reply) => {
    pageHeaders(reply);
    const origin = request.headers.origin;
    if (!origin || !isOwnOrigin(request, origin, publicUrl())) {
      return reply.code(403).send(page("The account was not connected", "This confirmation did not come from Runnel's own page. Open the connection link you were given and confirm there."));
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    try {
      return goToProvider(reply, await appAccounts.pendingFlow(body.state));
    } catch (error) {
      if (error instanceof OAuthCallbackError) return reply.code(400).send(page("The account cannot be connected", error.message));
      throw error;
    }
  });

  app.get("/oauth/callback", { schema: { hide: true } }, async (request, reply) => {
    pageHeaders(reply);
    try {
      const bound = (stateHash: string) => appAccounts.binding.holds(stateHash, readCookie(request.headers.cookie, appAccounts.binding.cookieName(stateHash)));
      const { account, app: connectedApp } = await appAccounts.finishOAuth(request.query as Record<string, unknown>, bound);
      return reply.code(200).send(page("Account connected", `Your ${connectedApp.name} account '${account.name}' is connected as ${account.id}. You can close this page.`));
    } catch (error) {
      if (error instanceof OAuthCallbackError) return reply.code(400).send(page("The account was not connected", error.message));
      throw error;
    }
  });
};

/** Whether the request carries the console session of `ownerId`. */
async function signedInAs(request: FastifyRequest, sessions: Sessions, ownerId: string): Promise<boolean> {
  const token = readCookie(request.headers.cookie, SESSION_COOKIE);
  if (!token) return false;
  try {
    return (await sessions.authenticate(token)).user.id === ownerId;
  } catch {
    return false;
  }
}

function pageHeaders(reply: FastifyReply): void {
  reply.header("content-type", "text/html; charset=utf-8").header("cache-control", "no-store").header("referrer-policy", "no-referrer");
  // No scripts; the confirm form posts to this server only; never inside another site's frame.
  reply.header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'").header("x-frame-options", "DENY");
}

function confirmPage(flow: PendingOAuthFlow, state: string): string {
  const what = flow.reconnect ? `Reconnect the ${flow.appName} account '${flow.accountName}'` : `Connect a ${flow.appName} account as '${flow.accountName}'`;
  const body =
    `<p>${escapeHtml(`${what} to the Runnel user ${flow.ownerName}?`)}</p>` +
    `<p>${escapeHtml(`Continue only if you started this yourself, as ${flow.ownerName}. If someone sent you this link, close this page: continuing would give them access to your ${flow.appName} account.`)}</p>` +
    `<form method="post" action="/oauth/authorize"><input type="hidden" name="state" value="${escapeHtml(state)}"><button type="submit">${escapeHtml(`Continue to ${flow.appName}`)}</button></form>`;
  return layout(`${flow.reconnect ? "Reconnect" : "Connect"} ${flow.appName}`, body);
}

/** Everything shown is escaped: names and provider messages are text, never HTML. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function page(title: string, message: string): string {
  return layout(title, `<p>${escapeHtml(message)}</p>`);
}

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Runnel</title></head><body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; line-height: 1.5"><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
