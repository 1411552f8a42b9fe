import type { AppDefinition, KeyField, OAuthAppAuth } from "./apps.js";

/**
 * The apps Runnel ships, written from each provider's public OAuth or API
 * documentation (URLs as of 2026). Scopes are a useful default; an admin who
 * needs others adds the app under a slug of their own (POST /v1/apps).
 * The client id and secret are the admin's: PUT /v1/apps/<slug>/oauth_client
 * or RUNNEL_OAUTH_<SLUG>_CLIENT_ID / _CLIENT_SECRET.
 */
function oauth(slug: string, name: string, auth: Partial<OAuthAppAuth> & Pick<OAuthAppAuth, "authorizeUrl" | "tokenUrl" | "scopes">): AppDefinition {
  return {
    slug,
    name,
    shipped: true,
    auth: { type: "oauth", scopeSeparator: " ", pkce: true, clientAuth: "body", tokenPlacement: "header", authorizeParams: {}, ...auth },
  };
}

function keys(slug: string, name: string, fields: Array<Partial<KeyField> & Pick<KeyField, "name" | "label">>): AppDefinition {
  return { slug, name, shipped: true, auth: { type: "keys", fields: fields.map((field) => ({ secret: true, optional: false, ...field })) } };
}

export const SHIPPED_APPS: readonly AppDefinition[] = [
  // docs.github.com: "Authorizing OAuth apps" (web application flow; PKCE S256 accepted).
  oauth("github", "GitHub", { authorizeUrl: "https://github.com/login/oauth/authorize", tokenUrl: "https://github.com/login/oauth/access_token", scopes: ["read:user", "repo"] }),
  // docs.gitlab.com: "OAuth 2.0 identity provider API" (authorization code with PKCE).
  oauth("gitlab", "GitLab", { authorizeUrl: "https://gitlab.com/oauth/authorize", tokenUrl: "https://gitlab.com/oauth/token", scopes: ["read_user", "api"] }),
  // api.slack.com: "Installing with OAuth" (v2; comma-separated scopes, no PKCE for confidential clients).
  oauth("slack", "Slack", { authorizeUrl: "https://slack.com/oauth/v2/authorize", tokenUrl: "https://slack.com/api/oauth.v2.access", scopes: ["chat:write", "channels:read"], scopeSeparator: ",", pkce: false }),
  // developers.google.com: "Using OAuth 2.0 for Web Server Applications" (offline access for a refresh token).
  oauth("google", "Google", {
    authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth",
    tokenUrl: "https://oauth2.googleapis.com/token",
    scopes: ["openid", "email", "profile"],
    authorizeParams: { access_type: "offline", prompt: "consent" },
  }),
  // learn.microsoft.com: "Microsoft identity platform and OAuth 2.0 authorization code flow" (offline_access for refresh).
  oauth("microsoft", "Microsoft", {
    authorizeUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    tokenUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    scopes: ["offline_access", "User.Read"],
  }),
  // developers.notion.com: "Authorization" (public integrations; Basic client auth, owner=user, no scopes).
  oauth("notion", "Notion", { authorizeUrl: "https://api.notion.com/v1/oauth/authorize", tokenUrl: "https://api.notion.com/v1/oauth/token", scopes: [], pkce: false, clientAuth: "basic", authorizeParams: { owner: "user" } }),
  // discord.com/developers: "OAuth2" (authorization code grant).
  oauth("discord", "Discord", { authorizeUrl: "https://discord.com/oauth2/authorize", tokenUrl: "https://discord.com/api/oauth2/token", scopes: ["identify", "guilds"], pkce: false }),
  // airtable.com/developers: "OAuth reference" (PKCE required; Basic client auth for confidential clients).
  oauth("airtable", "Airtable", {
    authorizeUrl: "https://airtable.com/oauth2/v1/authorize",
    tokenUrl: "https://airtable.com/oauth2/v1/token",
    scopes: ["data.records:read", "data.records:write", "schema.bases:read"],
    clientAuth: "basic",
  }),
  // developers.hubspot.com: "OAuth quickstart" (authorization code; refresh tokens).
  oauth("hubspot", "HubSpot", { authorizeUrl: "https://app.hubspot.com/oauth/authorize", tokenUrl: "https://api.hubapi.com/oauth/v1/token", scopes: ["oauth", "crm.objects.contacts.read"], pkce: false }),
  // linear.app/developers: "OAuth 2.0 authentication" (comma-separated scopes; PKCE supported).
  oauth("linear", "Linear", { authorizeUrl: "https://linear.app/oauth/authorize", tokenUrl: "https://api.linear.app/oauth/token", scopes: ["read", "write"], scopeSeparator: "," }),
  // developers.dropbox.com: "OAuth guide" (token_access_type=offline for a refresh token; PKCE supported).
  oauth("dropbox", "Dropbox", {
    authorizeUrl: "https://www.dropbox.com/oauth2/authorize",
    tokenUrl: "https://api.dropboxapi.com/oauth2/token",
    scopes: ["account_info.read", "files.metadata.read"],
    authorizeParams: { token_access_type: "offline" },
  }),

  // docs.stripe.com: "API keys" (secret key sk_…, or a restricted key rk_…).
  keys("stripe", "Stripe", [{ name: "api_key", label: "Secret or restricted key" }]),
  // platform.openai.com: "Authentication" (Bearer key; organization and project optional headers).
  keys("openai", "OpenAI", [
    { name: "api_key", label: "API key" },
    { name: "organization", label: "Organization ID", secret: false, optional: true },
  ]),
  // docs.anthropic.com: "API overview" (x-api-key header).
  keys("anthropic", "Anthropic", [{ name: "api_key", label: "API key" }]),
  // twilio.com/docs: "REST API: Authentication" (Basic with Account SID and Auth Token).
  keys("twilio", "Twilio", [
    { name: "account_sid", label: "Account SID", secret: false },
    { name: "auth_token", label: "Auth token" },
  ]),
  // docs.sendgrid.com: "API keys" (Bearer key).
  keys("sendgrid", "SendGrid", [{ name: "api_key", label: "API key" }]),
  // core.telegram.org/bots/api: "Authorizing your bot" (the bot token in the URL).
  keys("telegram_bot_api", "Telegram bot", [{ name: "token", label: "Bot token (from @BotFather)" }]),
  // Any API that takes a key in a header or query parameter.
  keys("http_api_key", "HTTP API key", [
    { name: "api_key", label: "API key" },
    { name: "base_url", label: "Base URL", secret: false, optional: true },
  ]),
  // Any API behind HTTP Basic authentication (RFC 7617).
  keys("basic_auth", "Basic auth", [
    { name: "username", label: "Username", secret: false },
    { name: "password", label: "Password" },
    { name: "base_url", label: "Base URL", secret: false, optional: true },
  ]),
];
