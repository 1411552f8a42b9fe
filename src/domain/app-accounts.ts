import { createHash, randomBytes } from "node:crypto";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import { isIdOf } from "./ids.js";

/**
 * A user's connected account of an app (`apn_…`): the credentials that
 * `this.<appProp>.$auth` gives the components configured with it. Its
 * fields are sealed with the master key as one value; only the engine opens
 * them, to hand them to a run or to refresh a token.
 */
export interface AppAccount {
  id: string;
  ownerId: string;
  app: string;
  name: string;
  /** The account's `$auth` fields as one sealed JSON object (`enc:v1:…`). */
  sealedFields: string;
  /** When the OAuth access token expires (epoch ms); null: no expiry known, or not OAuth. */
  expiresAt: number | null;
  health: AccountHealth;
  /** Why the account needs reconnecting, for the person (never a token). */
  healthMessage: string | null;
  createdAt: number;
  updatedAt: number;
}

/** An account as a process about to refresh it (or waiting on another's refresh) reads it. */
export interface AppAccountRefresh {
  account: AppAccount;
  /** Who is refreshing it and until when their lease holds (epoch ms); null when nobody is. */
  lease: { holder: string; until: number } | null;
  /** Why and when the last leased refresh failed without marking the account (the provider unreachable); null otherwise. */
  lastFailure: RefreshFailure | null;
}

/** A refresh that failed for a reason other than the grant: the message a run fails with, and when (epoch ms). */
export interface RefreshFailure {
  message: string;
  at: number;
}

/** `ok`, or `needs_reconnect` once the provider refused a refresh (revoked, expired grant). */
export type AccountHealth = "ok" | "needs_reconnect";

/** What an OAuth account holds, opened: the token response's parts that matter. */
export interface OAuthTokens {
  oauth_access_token: string;
  oauth_refresh_token?: string;
  oauth_uid?: string;
}

/** An OAuth connection in progress: kept server-side under the hash of its one-time `state`, until the callback or its expiry. */
export interface OAuthFlow {
  stateHash: string;
  ownerId: string;
  app: string;
  name: string;
  /** The account being reconnected; null for a new one. */
  accountId: string | null;
  /** The PKCE code verifier, sealed. */
  sealedVerifier: string;
  expiresAt: number;
  createdAt: number;
}

/** A connection not finished within this long must be started again. */
export const OAUTH_FLOW_TTL_MS = 10 * 60 * 1000;
/** A token is refreshed when it has less than this left, so that a run never starts with one about to lapse. */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/** The account's token lapses within the refresh margin: a run must not start with it. */
export function isTokenLapsing(account: Pick<AppAccount, "expiresAt">, now: number): boolean {
  return account.expiresAt !== null && account.expiresAt - now < REFRESH_MARGIN_MS;
}

export const ACCOUNT_NAME_RULE = "1 to 100 characters";

export function checkAccountName(value: unknown, field = "name"): string {
  if (typeof value !== "string" || value.trim() === "" || value.trim().length > 100) {
    throw new ValidationError(field, `${field} must be a name for the account (${ACCOUNT_NAME_RULE}, like "work"); got ${describeValue(value)}.`);
  }
  return value.trim();
}

/** A new `state`: 256 random bits; only its hash is stored. */
export function newOAuthState(): string {
  return randomBytes(32).toString("base64url");
}

export function hashState(state: string): string {
  return createHash("sha256").update(state).digest("hex");
}

/** A PKCE code verifier (RFC 7636 4.1: 43 to 128 unreserved characters) and its S256 challenge. */
export function newPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString("base64url");
  return { verifier, challenge: pkceChallenge(verifier) };
}

/** The S256 challenge of a PKCE verifier (RFC 7636). */
export function pkceChallenge(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/**
 * The account an app prop is configured with: `{ "authProvisionId": "apn_…" }`,
 * the form existing deploy payloads use; null when the prop has no account.
 */
export function configuredAccountId(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as Record<string, unknown>).authProvisionId;
  return typeof id === "string" ? id : null;
}

/** Checks an app prop's configured value: absent, or `{ authProvisionId: "apn_…" }`. A problem, or null. */
export function appPropValueProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `takes a connected account as { "authProvisionId": "apn_…" } (runnel accounts list shows yours); got ${describeValue(value)}.`;
  }
  const id = (value as Record<string, unknown>).authProvisionId;
  if (typeof id !== "string" || !isIdOf("appAccount", id)) {
    return `takes a connected account as { "authProvisionId": "apn_…" }; got authProvisionId ${describeValue(id)}. runnel accounts list shows yours.`;
  }
  return null;
}

/** How a run's error names an account: `the GitHub account 'work'`. */
export function describeAccount(appName: string, accountName: string): string {
  return `the ${appName} account '${accountName}'`;
}
