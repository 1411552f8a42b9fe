import type { FastifyPluginAsync } from "fastify";
import { OAuthCallbackError, type AppAccountsService } from "../../engine/apps/app-accounts-service.js";

/**
 * GET /oauth/callback: where a provider sends the browser back after the
 * user granted (or refused) access. Outside /v1 and without a key: the
 * one-time state says whose connection it finishes. The answer is a small
 * plain page for the person at the browser.
 */
export const oauthCallbackRoutes: FastifyPluginAsync<{ appAccounts: AppAccountsService }> = async (app, { appAccounts }) => {
  app.get("/oauth/callback", { schema: { hide: true } }, async (request, reply) => {
    reply.header("content-type", "text/html; charset=utf-8").header("cache-control", "no-store").header("referrer-policy", "no-referrer");
    reply.header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'");
    try {
      const { account, app: connectedApp } = await appAccounts.finishOAuth(request.query as Record<string, unknown>);
      return reply.code(200).send(page("Account connected", `Your ${connectedApp.name} account '${account.name}' is connected as ${account.id}. You can close this page.`));
    } catch (error) {
      if (error instanceof OAuthCallbackError) return reply.code(400).send(page("The account was not connected", error.message));
      throw error;
    }
  });
};

/** Everything shown is escaped: names and provider messages are text, never HTML. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function page(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Runnel</title></head><body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; line-height: 1.5"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
}
