/**
 * The server's side of OAuth 2 (RFC 6749 4.1.3 and 6): a code exchanged for
 * tokens, a refresh token for a new access token. Requests go out under the
 * same egress policy as `$.send.http` (RUNNEL_EGRESS_ALLOW opens an internal
 * provider), and nothing of them is logged.
 */
import type { OAuthAppAuth } from "../../domain/apps.js";
import type { OAuthTokens } from "../../domain/app-accounts.js";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { egressRequest } from "../network/egress-request.js";
import type { OAuthClient } from "./app-catalog.js";

/** How long a token request may take; the refresh lease outlasts it (account-refresh.ts). */
export const TOKEN_TIMEOUT_MS = 15_000;

/** What the token endpoint gave: the `$auth` fields and when the access token lapses. */
export interface TokenGrant {
  tokens: OAuthTokens;
  /** Epoch ms; null when the provider gave no `expires_in` (the token does not lapse, or it does not say). */
  expiresAt: number | null;
}

/**
 * The provider refused (`error` as RFC 6749 5.2 names it: invalid_grant for a
 * revoked or used refresh token or code), or answered something unusable.
 */
export class TokenRequestError extends Error {
  constructor(
    message: string,
    /** The provider's `error`, or null when it gave none (a network failure, a page that is not JSON). */
    readonly oauthError: string | null,
  ) {
    super(message);
    this.name = "TokenRequestError";
  }

  /** The grant itself is dead: only a new connection helps (RFC 6749 5.2 invalid_grant; unauthorized_client). */
  get grantRevoked(): boolean {
    return this.oauthError === "invalid_grant" || this.oauthError === "unauthorized_client";
  }
}

export interface TokenRequestOptions {
  auth: OAuthAppAuth;
  client: OAuthClient;
  policy: EgressPolicy | null;
  now: number;
}

export function exchangeCode(options: TokenRequestOptions, code: string, redirectUri: string, verifier: string | null): Promise<TokenGrant> {
  const params: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: redirectUri };
  if (verifier !== null) params.code_verifier = verifier;
  return requestToken(options, params, null);
}

/** A refresh; a provider that sends no new refresh token keeps the old one valid (RFC 6749 6), so it is kept. */
export function refreshTokens(options: TokenRequestOptions, refreshToken: string): Promise<TokenGrant> {
  return requestToken(options, { grant_type: "refresh_token", refresh_token: refreshToken }, refreshToken);
}

async function requestToken(options: TokenRequestOptions, params: Record<string, string>, previousRefresh: string | null): Promise<TokenGrant> {
  const { auth, client } = options;
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  const form = new URLSearchParams(params);
  if (auth.clientAuth === "basic") {
    // RFC 6749 2.3.1: each part form-encoded before the Basic encoding.
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString("base64")}`;
  } else {
    form.set("client_id", client.clientId);
    form.set("client_secret", client.clientSecret);
  }
  let answer: { status: number; body?: string };
  try {
    answer = await egressRequest({ method: "POST", url: new URL(auth.tokenUrl), headers, body: form.toString(), timeoutMs: TOKEN_TIMEOUT_MS, policy: options.policy, keepBody: true });
  } catch (error) {
    throw new TokenRequestError(`the token endpoint ${new URL(auth.tokenUrl).host} could not be reached (${(error as Error).message})`, null);
  }
  const parsed = parseAnswer(answer.body ?? "");
  if (answer.status < 200 || answer.status >= 300 || typeof parsed.error === "string") {
    const code = typeof parsed.error === "string" ? parsed.error : null;
    const description = typeof parsed.error_description === "string" ? `: ${parsed.error_description.slice(0, 200)}` : "";
    throw new TokenRequestError(`the provider answered ${answer.status}${code ? ` ${code}` : ""}${description}`, code);
  }
  const access = parsed.access_token;
  if (typeof access !== "string" || access === "") throw new TokenRequestError(`the provider answered ${answer.status} without an access_token`, null);
  const tokens: OAuthTokens = { oauth_access_token: access };
  const refresh = typeof parsed.refresh_token === "string" && parsed.refresh_token !== "" ? parsed.refresh_token : previousRefresh;
  if (refresh) tokens.oauth_refresh_token = refresh;
  const uid = uidOf(parsed);
  if (uid) tokens.oauth_uid = uid;
  const expiresIn = Number(parsed.expires_in);
  return { tokens, expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? options.now + expiresIn * 1000 : null };
}

/** JSON (RFC 6749 5.1), or the form encoding some older providers still answer with. */
function parseAnswer(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return Object.fromEntries(new URLSearchParams(body));
  }
}

/**
 * The user id some providers put beside the token: flat (HubSpot's user_id,
 * Dropbox's account_id), or in the object that describes the user (Slack's
 * authed_user.id, Notion's owner.user.id). An OIDC id_token's sub is not read here.
 */
const UID_PATHS: readonly (readonly string[])[] = [["user_id"], ["uid"], ["account_id"], ["x_user_id"], ["authed_user", "id"], ["owner", "user", "id"]];

function uidOf(parsed: Record<string, unknown>): string | null {
  for (const path of UID_PATHS) {
    let value: unknown = parsed;
    for (const key of path) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    if ((typeof value === "string" && value !== "") || typeof value === "number") return String(value);
  }
  return null;
}
