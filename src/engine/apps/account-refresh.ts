/**
 * One OAuth refresh of a connected account across every server process of
 * the installation, through the store: the process about to call the token
 * endpoint first takes the account row's refresh lease (one compare-and-set
 * UPDATE), refreshes, and writes the new sealed tokens ending the lease in
 * one update; the others poll the row until its tokens change and use them.
 * Why: a provider that rotates refresh tokens refuses the second use of one
 * (and may revoke the whole grant), so two processes refreshing at once
 * would break the account. A lease whose holder died lapses and is taken
 * over; a failed refresh is recorded on the row, so that those who waited
 * get the same error, not a timeout, and the runs of the next few seconds
 * too, instead of each asking a provider that is down.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import { isTokenLapsing, type AppAccount, type RefreshFailure } from "../../domain/app-accounts.js";
import type { AppDefinition, OAuthAppAuth } from "../../domain/apps.js";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { AuthError } from "../../domain/errors.js";
import type { Store } from "../../store/store.js";
import type { SecretBox } from "../secrets.js";
import { accountLabel, deletedAccountError, reconnectError } from "./account-errors.js";
import type { AppCatalog } from "./app-catalog.js";
import { refreshTokens, TOKEN_TIMEOUT_MS, TokenRequestError, type TokenGrant } from "./oauth-token-client.js";

/** A lease outlasts the token request's own timeout, with room for the store writes around it: a live holder never loses it. */
export const REFRESH_LEASE_MS = TOKEN_TIMEOUT_MS + 5_000;
/** How often a process waiting on another's refresh reads the row: short, a refresh takes a fraction of a second. */
const POLL_MS = 150;
/** After a refresh failed for a reason other than the grant (the provider down), runs share its failure this long before one asks again. */
export const REFRESH_RETRY_AFTER_MS = 5_000;

export type OAuthApp = AppDefinition & { auth: OAuthAppAuth };

export interface AccountRefresherOptions {
  store: Store;
  secrets: SecretBox;
  catalog: AppCatalog;
  egressPolicy: EgressPolicy | null;
  logger?: Logger;
  now: () => number;
  /** This process's instance id, in the lease's holder (for whoever looks at the row); `pid-<pid>` when there is none. */
  instanceId?: string;
}

export class AccountRefresher {
  private readonly processId: string;

  constructor(private readonly options: AccountRefresherOptions) {
    this.processId = options.instanceId ?? `pid-${process.pid}`;
  }

  /**
   * The account's fields after a refresh, by this process or by another one
   * at the same moment. `refused`: the access token a provider answered 401
   * to (refreshed whatever its expiry says, unless it changed meanwhile).
   */
  async refresh(app: OAuthApp, ownerId: string, accountId: string, refused: string | null): Promise<Record<string, string>> {
    const { store, now } = this.options;
    // Twice the lease: one holder that died and the one that took over.
    const giveUpAt = now() + 2 * REFRESH_LEASE_MS;
    let waited = false;
    for (;;) {
      const state = await store.findAppAccountRefresh(ownerId, accountId);
      if (!state) throw deletedAccountError(accountId);
      const { account, lease, lastFailure } = state;
      if (account.health === "needs_reconnect") throw reconnectError(app, account, account.healthMessage);
      const fields = this.open(account);
      const forced = refused !== null && fields.oauth_access_token === refused;
      // Read again each time: a refresh that ended a moment ago, here or elsewhere, left a fresh token.
      if (!forced && !isTokenLapsing(account, now())) return fields;
      const at = now();
      if (lease === null || lease.until < at) {
        // The refresh this run waited on, or one a moment ago, ended without new tokens: its failure is this run's answer too.
        if (lastFailure !== null && (waited || at - lastFailure.at < REFRESH_RETRY_AFTER_MS)) return this.afterFailure(app, account, fields, forced, lastFailure.message);
        const holder = `${this.processId}:${randomBytes(6).toString("hex")}`;
        if (await store.takeAccountRefreshLease(ownerId, accountId, holder, at, at + REFRESH_LEASE_MS)) return this.refreshHolding(app, account, fields, forced, holder);
      }
      if (at >= giveUpAt) {
        throw new AuthError(`${accountLabel(app, account)} is being refreshed by another Runnel process, which has not finished within ${Math.round((2 * REFRESH_LEASE_MS) / 1000)} s. Runs try again; if this lasts, check that the provider can be reached.`, { app: app.slug, account: account.id });
      }
      waited = true;
      await delay(POLL_MS);
    }
  }

  /** The refresh proper, under the lease `holder`: ended by the write of the new tokens, else released with why it failed. */
  private async refreshHolding(app: OAuthApp, account: AppAccount, fields: Record<string, string>, forced: boolean, holder: string): Promise<Record<string, string>> {
    const { store, secrets, catalog } = this.options;
    let saved = false;
    let failure: RefreshFailure | null = null;
    try {
      const refreshToken = fields.oauth_refresh_token;
      if (!refreshToken) {
        if (forced) {
          const message = `${accountLabel(app, account)} was refused by ${app.name} and has no refresh token: reconnect it (runnel accounts reconnect ${account.id}).`;
          failure = { message, at: this.options.now() };
          throw new AuthError(message, { app: app.slug, account: account.id });
        }
        if ((account.expiresAt ?? 0) > this.options.now()) return fields;
        throw await this.markNeedsReconnect(app, account, "its access token expired and the provider gave no refresh token");
      }
      const at = this.options.now();
      let grant: TokenGrant;
      try {
        grant = await refreshTokens({ auth: app.auth, client: await catalog.clientFor(app), policy: this.options.egressPolicy, now: at }, refreshToken);
      } catch (error) {
        // This lease lapsed and whoever took it over refreshed first (the refresh token was theirs to use): their tokens are the answer.
        const newer = await this.changedFields(app, account);
        if (newer) return newer;
        if (error instanceof TokenRequestError && error.grantRevoked) throw await this.markNeedsReconnect(app, account, `the provider refused to refresh its token (${error.message})`);
        failure = { message: `${accountLabel(app, account)} could not be refreshed: ${(error as Error).message}. Runs try again; if this lasts, check that the provider can be reached.`, at: this.options.now() };
        return this.afterFailure(app, account, fields, forced, failure.message);
      }
      const next = { ...fields, ...grant.tokens };
      const refreshed: AppAccount = { ...account, sealedFields: secrets.seal(JSON.stringify(next)), expiresAt: grant.expiresAt, health: "ok", healthMessage: null, updatedAt: this.options.now() };
      saved = await store.saveRefreshedAppAccount(refreshed, account.sealedFields, holder);
      // Not saved: the account changed meanwhile (reconnected): its new fields win over these tokens.
      if (!saved) return (await this.changedFields(app, account)) ?? next;
      this.options.logger?.info({ account: account.id, app: app.slug }, "refreshed a connected account's access token");
      return next;
    } finally {
      if (!saved) await store.releaseAccountRefreshLease(account.ownerId, account.id, holder, failure);
    }
  }

  /** A refresh that failed for a reason other than the grant (the provider unreachable, a 5xx): a token with time left still serves a run that did not get a 401. */
  private afterFailure(app: OAuthApp, account: AppAccount, fields: Record<string, string>, forced: boolean, message: string): Record<string, string> {
    if (!forced && (account.expiresAt ?? 0) > this.options.now()) return fields;
    throw new AuthError(message, { app: app.slug, account: account.id });
  }

  /** The account's fields when they are no longer those of `account` (refreshed or reconnected by someone else); null when they are the same. */
  private async changedFields(app: OAuthApp, account: AppAccount): Promise<Record<string, string> | null> {
    const current = await this.options.store.findAppAccount(account.ownerId, account.id);
    if (!current) throw deletedAccountError(account.id);
    if (current.sealedFields === account.sealedFields) return null;
    if (current.health === "needs_reconnect") throw reconnectError(app, current, current.healthMessage);
    return this.open(current);
  }

  private async markNeedsReconnect(app: OAuthApp, account: AppAccount, why: string): Promise<AuthError> {
    await this.options.store.updateAppAccount({ ...account, health: "needs_reconnect", healthMessage: why, updatedAt: this.options.now() });
    this.options.logger?.warn({ account: account.id, app: app.slug }, "a connected account must be reconnected: its refresh was refused");
    return reconnectError(app, account, why);
  }

  private open(account: AppAccount): Record<string, string> {
    return JSON.parse(this.options.secrets.open(account.sealedFields)) as Record<string, string>;
  }
}
