import type { AppDefinition, KeyField, OAuthAppAuth } from "./apps.js";

/**
 * The apps Runnel ships, written from each provider's public OAuth or API
 * documentation. Above each app: the page it was checked against and when
 * (docs/apps.md has the table, and what the search found nothing for).
 * Scopes are a useful default; an admin who needs others adds the app under
 * a slug of their own (POST /v1/apps). The client id and secret are the
 * admin's: PUT /v1/apps/<slug>/oauth_client or
 * RUNNEL_OAUTH_<SLUG>_CLIENT_ID / _CLIENT_SECRET.
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
  // https://docs.github.com/enterprise-server@3.0/developers/apps/authorizing-oauth-apps (web application flow; space-delimited scopes), read 2026-11-27.
  // https://github.blog/changelog/2025-07-14-pkce-support-for-oauth-and-github-app-authentication (PKCE S256 supported and recommended, not required), read 2026-11-27.
  oauth("github", "GitHub", { authorizeUrl: "https://github.com/login/oauth/authorize", tokenUrl: "https://github.com/login/oauth/access_token", scopes: ["read:user", "repo"] }),

  // https://docs.GitLab.com/ee/api/oauth2.html (authorization code with PKCE, recommended for server apps too), read 2026-11-27.
  oauth("gitlab", "GitLab", { authorizeUrl: "https://gitlab.com/oauth/authorize", tokenUrl: "https://gitlab.com/oauth/token", scopes: ["read_user", "api"] }),

  // https://docs.slack.dev/authentication/installing-with-oauth (v2 flow; the answer puts the bot token first), read 2026-11-27.
  // https://docs.slack.dev/reference/methods/oauth.v2.access.md ("avoid sending client_id and client_secret as parameters": HTTP Basic), read 2026-11-27.
  // https://docs.slack.dev/authentication/using-token-rotation (a refresh token and a 12-hour token only when rotation is on), read 2026-11-27.
  // `scope` asks for bot scopes: the top-level access_token is the bot token (xoxb-); authed_user.id is the installing user.
  oauth("slack", "Slack", {
    authorizeUrl: "https://slack.com/oauth/v2/authorize",
    tokenUrl: "https://slack.com/api/oauth.v2.access",
    scopes: ["chat:write", "channels:read"],
    scopeSeparator: ",",
    pkce: false,
    clientAuth: "basic",
  }),

  // https://developers.google.com/accounts/docs/OAuth ("Using OAuth 2.0 for Web Server Applications": access_type=offline for a refresh token), read 2026-11-27.
  // https://cloud.google.com/nodejs/docs/reference/google-auth-library/7.4.1/google-auth-library/generateauthurlopts (code_challenge "Recommended"), read 2026-11-27.
  // prompt=consent: Google gives a refresh token only on a consent, and a reconnect must get a new one.
  oauth("google", "Google", {
    authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth",
    tokenUrl: "https://oauth2.googleapis.com/token",
    scopes: ["openid", "email", "profile"],
    authorizeParams: { access_type: "offline", prompt: "consent" },
  }),

  // https://learn.microsoft.com/ar-sa/azure/active-directory/develop/active-directory-v2-protocols-oauth-code (auth code flow paired with PKCE), read 2026-11-27.
  // https://learn.microsoft.com/en-us/answers/questions/702519/endpoint-url-for-offline-access (offline_access for a refresh token), read 2026-11-27.
  oauth("microsoft", "Microsoft", {
    authorizeUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    tokenUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    scopes: ["offline_access", "User.Read"],
  }),

  // https://developers.notion.com/reference/authorization (public integrations; owner=user), read 2026-11-27.
  // https://developers.notion.com/reference/create-a-token and https://developers.notion.com/reference/refresh-a-token.md
  // (OAuth endpoints take HTTP Basic; the answer has refresh_token and owner.user.id), read 2026-11-27. No scopes: access is chosen page by page.
  oauth("notion", "Notion", { authorizeUrl: "https://api.notion.com/v1/oauth/authorize", tokenUrl: "https://api.notion.com/v1/oauth/token", scopes: [], pkce: false, clientAuth: "basic", authorizeParams: { owner: "user" } }),

  // https://docs.discord.com/developers/topics/oauth2 (authorization code grant; form-encoded token requests), read 2026-11-27.
  // https://discord.com/.well-known/oauth-authorization-server (code_challenge_methods_supported: S256; client_secret_basic or _post), read 2026-11-27.
  oauth("discord", "Discord", { authorizeUrl: "https://discord.com/oauth2/authorize", tokenUrl: "https://discord.com/api/oauth2/token", scopes: ["identify", "guilds"] }),

  // https://airtable.com/developers/web/api/oauth-reference (code_challenge S256 in every authorization request; space-delimited scopes), read 2026-11-27.
  // Its example, github.com/Airtable/oauth-example index.js: "Authorization is required if your integration has a client secret" (Basic).
  oauth("airtable", "Airtable", {
    authorizeUrl: "https://airtable.com/oauth2/v1/authorize",
    tokenUrl: "https://airtable.com/oauth2/v1/token",
    scopes: ["data.records:read", "data.records:write", "schema.bases:read"],
    clientAuth: "basic",
  }),

  // https://developers.hubspot.com/docs/api-reference/2026-03/authentication/manage-oauth-tokens (all parameters in the form body), read 2026-11-27.
  // https://developers.hubspot.com/changelog/v1-oauth-api-deprecation (/oauth/v1/token is retired on 2027-02-16; use /oauth/2026-03/token), read 2026-11-27.
  // The answer has user_id and hub_id beside the tokens; access tokens last 30 minutes.
  oauth("hubspot", "HubSpot", { authorizeUrl: "https://app.hubspot.com/oauth/authorize", tokenUrl: "https://api.hubapi.com/oauth/2026-03/token", scopes: ["oauth", "crm.objects.contacts.read"], pkce: false }),

  // https://linear.app/docs/oauth/authentication (comma-separated scopes; PKCE supported; refresh tokens for every app since 2026-04-01), read 2026-11-27.
  oauth("linear", "Linear", { authorizeUrl: "https://linear.app/oauth/authorize", tokenUrl: "https://api.linear.app/oauth/token", scopes: ["read", "write"], scopeSeparator: "," }),

  // https://www.dropbox.com/lp/developers/reference/oauth-guide (code flow, scopes, PKCE), read 2026-11-27.
  // https://dropbox.tech/developers/using-oauth-2-0-with-offline-access (token_access_type=offline for a refresh token), read 2026-11-27.
  oauth("dropbox", "Dropbox", {
    authorizeUrl: "https://www.dropbox.com/oauth2/authorize",
    tokenUrl: "https://api.dropboxapi.com/oauth2/token",
    scopes: ["account_info.read", "files.metadata.read"],
    authorizeParams: { token_access_type: "offline" },
  }),

  // https://docs.stripe.com/api/authentication?lang=curl (secret key sk_test_/sk_live_ or a restricted key; Basic username or Bearer), read 2026-11-27.
  keys("stripe", "Stripe", [{ name: "api_key", label: "Secret or restricted key" }]),

  // https://openai-clone.xyd.dev/api-reference/introduction, a copy of OpenAI's API reference introduction: the search had no
  // platform.openai.com page (Bearer key; OpenAI-Organization and OpenAI-Project headers for multi-organization or legacy user keys), read 2026-11-27.
  keys("openai", "OpenAI", [
    { name: "api_key", label: "API key" },
    { name: "organization", label: "Organization ID", secret: false, optional: true },
    { name: "project", label: "Project ID", secret: false, optional: true },
  ]),

  // https://docs.anthropic.com/claude/reference/getting-started-with-the-api (an x-api-key header on every request), read 2026-11-27.
  keys("anthropic", "Anthropic", [{ name: "api_key", label: "API key" }]),

  // https://twilio.com/docs/usage/requests-to-twilio (HTTP Basic: Account SID and Auth Token, or an API key and its secret, which Twilio recommends), read 2026-11-27.
  // The Account SID is an identifier (it is in every request's URL), not a secret. The field names are those the
  // published Twilio components read (`this.$auth.Sid`, `.Secret`, `.AccountSid`: Basic auth as Sid:Secret on the
  // account's URL), so that they run unchanged; Twilio takes the Account SID and Auth Token as that pair too.
  keys("twilio", "Twilio", [
    { name: "AccountSid", label: "Account SID", secret: false },
    { name: "Sid", label: "API key SID (or the Account SID again, to use the auth token)", secret: false },
    { name: "Secret", label: "API key secret (or the auth token)" },
  ]),

  // https://twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/authentication (Authorization: Bearer <API key>), read 2026-11-27.
  keys("sendgrid", "SendGrid", [{ name: "api_key", label: "API key" }]),

  // https://raw.githubusercontent.com/spontanurlaub/telegram-bot-api-log/main/api, a copy of core.telegram.org/bots/api
  // ("Authorizing your bot": https://api.telegram.org/bot<token>/METHOD_NAME), read 2026-11-27.
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
