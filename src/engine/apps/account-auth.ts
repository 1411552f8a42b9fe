/**
 * Connected accounts as runs use them: the `$auth` fields of an account,
 * current at the start of each run, its OAuth token refreshed before it
 * lapses (once per account however many runs ask at the same moment), and
 * a refused refresh marking the account as needing reconnection.
 */
import type { Logger } from "pino";
import { configuredAccountId, describeAccount, REFRESH_MARGIN_MS, type AppAccount } from "../../domain/app-accounts.js";
import type { AppDefinition, OAuthAppAuth } from "../../domain/apps.js";
import type { ValidatedComponent } from "../../domain/component-rules.js";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { AuthError, NotFoundError, ValidationError } from "../../domain/errors.js";
import type { Store } from "../../store/store.js";
import type { SecretBox } from "../secrets.js";
import type { AppCatalog } from "./app-catalog.js";
import { refreshTokens, TokenRequestError } from "./oauth-token-client.js";

export interface AccountAuthOptions {
  store: Store;
  secrets: SecretBox;
  catalog: AppCatalog;
  egressPolicy: EgressPolicy | null;
  logger?: Logger;
  now?: () => number;
}

/** An app prop's value as the runner takes it: the account's fields, or why the run cannot have them. */
export type AppPropValue = { $auth: Record<string, string>; $account: string } | { $auth: Record<string, never>; $authError: string };

export class AccountAuth {
  private readonly now: () => number;
  /** Refreshes in flight, by account id: a run that needs one joins it. */
  private readonly refreshing = new Map<string, Promise<Record<string, string>>>();

  constructor(private readonly options: AccountAuthOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The account's `$auth` fields, refreshed first when its token is about to lapse; an AuthError saying what to do when it cannot be used. */
  async fieldsOf(ownerId: string, accountId: string): Promise<Record<string, string>> {
    const account = await this.options.store.findAppAccount(ownerId, accountId);
    if (!account) throw new AuthError(`The connected account ${accountId} no longer exists (it was deleted). Connect one (runnel accounts connect <app>) and configure it on this prop again.`, { account: accountId });
    const app = await this.options.catalog.definition(account.app);
    if (account.health === "needs_reconnect") throw this.reconnectError(app, account, account.healthMessage);
    if (app.auth.type === "oauth" && this.isLapsing(account)) {
      let pending = this.refreshing.get(account.id);
      if (!pending) {
        pending = this.refresh(app as AppDefinition & { auth: OAuthAppAuth }, account.ownerId, account.id).finally(() => this.refreshing.delete(account.id));
        this.refreshing.set(account.id, pending);
      }
      return pending;
    }
    return this.open(account);
  }

  /** What the runner gets for an app prop configured with this account: the fields, or the AuthError's message for the run to fail with. */
  async propValue(ownerId: string, accountId: string): Promise<AppPropValue> {
    try {
      // $account: kept by the runner for $auth.refresh(), never shown to user code.
      return { $auth: await this.fieldsOf(ownerId, accountId), $account: accountId };
    } catch (error) {
      if (error instanceof AuthError) return { $auth: {}, $authError: error.message };
      // The account's app is gone from the server (an admin's app removed): the run fails saying so, not the batch.
      if (error instanceof NotFoundError) return { $auth: {}, $authError: `The connected account ${accountId} cannot be used: ${error.message}` };
      throw error;
    }
  }

  /**
   * The props of a run with each app prop configured with an account given
   * that account's `$auth` (and an app prop without one an empty `$auth`),
   * each account read once for the whole batch of runs.
   */
  async resolveProps(ownerId: string, component: ValidatedComponent, props: Record<string, unknown>): Promise<Record<string, unknown>> {
    const appProps = component.props.filter((prop) => prop.baseType === "app");
    if (appProps.length === 0) return props;
    const out = { ...props };
    for (const prop of appProps) {
      const accountId = configuredAccountId(props[prop.name]);
      out[prop.name] = accountId === null ? { $auth: {} } : await this.propValue(ownerId, accountId);
    }
    return out;
  }

  /** The accounts a run's app props are configured with: the only ones its `$auth.refresh()` may reach. */
  accountIdsOf(component: ValidatedComponent, props: Record<string, unknown>): string[] {
    const ids: string[] = [];
    for (const prop of component.props) {
      const id = prop.baseType === "app" ? configuredAccountId(props[prop.name]) : null;
      if (id !== null) ids.push(id);
    }
    return ids;
  }

  /** `$auth.refresh()` for a call of `ownerId` given these accounts: any other account is refused. */
  refreshHandler(ownerId: string, allowed: readonly string[]): (account: string, stale: string | null) => Promise<Record<string, string>> {
    const ids = new Set(allowed);
    return async (account, stale) => {
      if (!ids.has(account)) throw new AuthError("$auth.refresh(): this call was not given that account.");
      return this.refreshOnDemand(ownerId, account, stale);
    };
  }

  /**
   * The provider answered 401 to the token `stale`: refresh now, whatever
   * the expiry says, unless the token changed meanwhile (another run
   * refreshed it: its new fields are the answer). Joins a refresh in flight.
   */
  async refreshOnDemand(ownerId: string, accountId: string, stale: string | null): Promise<Record<string, string>> {
    const account = await this.options.store.findAppAccount(ownerId, accountId);
    if (!account) throw new AuthError(`The connected account ${accountId} no longer exists (it was deleted).`, { account: accountId });
    const app = await this.options.catalog.definition(account.app);
    if (account.health === "needs_reconnect") throw this.reconnectError(app, account, account.healthMessage);
    const fields = this.open(account);
    if (app.auth.type !== "oauth" || (stale !== null && fields.oauth_access_token !== stale)) return fields;
    let pending = this.refreshing.get(account.id);
    if (!pending) {
      pending = this.refresh(app as AppDefinition & { auth: OAuthAppAuth }, ownerId, accountId, stale ?? fields.oauth_access_token ?? null).finally(() => this.refreshing.delete(account.id));
      this.refreshing.set(account.id, pending);
    }
    return pending;
  }

  /**
   * On deploy and update: every app prop's account is one of the owner's
   * and of the prop's app. Another user's account is "not found", as any
   * of their resources is.
   */
  async checkConfigured(ownerId: string, component: ValidatedComponent, values: Record<string, unknown>, field: string): Promise<void> {
    for (const prop of component.props) {
      if (prop.baseType !== "app") continue;
      const accountId = configuredAccountId(values[prop.name]);
      if (accountId === null) continue;
      const account = await this.options.store.findAppAccount(ownerId, accountId);
      if (!account) {
        throw new ValidationError(`${field}.${prop.name}`, `Prop "${prop.name}": you have no connected account ${accountId}. runnel accounts list (GET /v1/accounts) shows yours; runnel accounts connect ${prop.app ?? "<app>"} makes one.`);
      }
      if (prop.app && account.app !== prop.app) {
        throw new ValidationError(`${field}.${prop.name}`, `Prop "${prop.name}" takes a ${prop.app} account, but ${accountId} ('${account.name}') is a ${account.app} account. Pick a ${prop.app} account (runnel accounts list).`);
      }
    }
  }

  private isLapsing(account: AppAccount): boolean {
    return account.expiresAt !== null && account.expiresAt - this.now() < REFRESH_MARGIN_MS;
  }

  private open(account: AppAccount): Record<string, string> {
    return JSON.parse(this.options.secrets.open(account.sealedFields)) as Record<string, string>;
  }

  private reconnectError(app: AppDefinition, account: AppAccount, why: string | null): AuthError {
    return new AuthError(
      `${capitalized(describeAccount(app.name, account.name))} must be reconnected${why ? `: ${why}` : ""}. Run runnel accounts reconnect ${account.id} (or reconnect it in the console's Accounts page).`,
      { app: app.slug, account: account.id },
    );
  }

  /** `refused`: the access token the provider answered 401 to (an on-demand refresh), refreshed whatever its expiry says unless it changed. */
  private async refresh(app: AppDefinition & { auth: OAuthAppAuth }, ownerId: string, accountId: string, refused: string | null = null): Promise<Record<string, string>> {
    const { store, secrets, catalog } = this.options;
    // Read again: a refresh that ended a moment ago left a fresh token.
    const account = await store.findAppAccount(ownerId, accountId);
    if (!account) throw new AuthError(`The connected account ${accountId} no longer exists (it was deleted).`, { account: accountId });
    if (account.health === "needs_reconnect") throw this.reconnectError(app, account, account.healthMessage);
    const fields = this.open(account);
    const forced = refused !== null && fields.oauth_access_token === refused;
    if (!forced && !this.isLapsing(account)) return fields;
    const refreshToken = fields.oauth_refresh_token;
    if (!refreshToken) {
      if (forced) throw new AuthError(`${capitalized(describeAccount(app.name, account.name))} was refused by ${app.name} and has no refresh token: reconnect it (runnel accounts reconnect ${account.id}).`, { app: app.slug, account: account.id });
      if ((account.expiresAt ?? 0) > this.now()) return fields;
      throw await this.markNeedsReconnect(app, account, "its access token expired and the provider gave no refresh token");
    }
    const at = this.now();
    try {
      const grant = await refreshTokens({ auth: app.auth, client: await catalog.clientFor(app), policy: this.options.egressPolicy, now: at }, refreshToken);
      const next = { ...fields, ...grant.tokens };
      await store.updateAppAccount({ ...account, sealedFields: secrets.seal(JSON.stringify(next)), expiresAt: grant.expiresAt, health: "ok", healthMessage: null, updatedAt: this.now() });
      this.options.logger?.info({ account: account.id, app: app.slug }, "refreshed a connected account's access token");
      return next;
    } catch (error) {
      if (error instanceof TokenRequestError && error.grantRevoked) throw await this.markNeedsReconnect(app, account, `the provider refused to refresh its token (${error.message})`);
      // Not the grant's fault (the provider unreachable, a 5xx): a token with time left still serves this run.
      if (!forced && (account.expiresAt ?? 0) > this.now()) return fields;
      throw new AuthError(`${capitalized(describeAccount(app.name, account.name))} could not be refreshed: ${(error as Error).message}. Runs try again; if this lasts, check that the provider can be reached.`, { app: app.slug, account: account.id });
    }
  }

  private async markNeedsReconnect(app: AppDefinition, account: AppAccount, why: string): Promise<AuthError> {
    await this.options.store.updateAppAccount({ ...account, health: "needs_reconnect", healthMessage: why, updatedAt: this.now() });
    this.options.logger?.warn({ account: account.id, app: app.slug }, "a connected account must be reconnected: its refresh was refused");
    return this.reconnectError(app, account, why);
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
