/**
 * Connected accounts as runs use them: the `$auth` fields of an account,
 * current at the start of each run, its OAuth token refreshed before it
 * lapses (once per account however many runs ask at the same moment, in
 * this process by joining the refresh in flight, across processes through
 * the store's refresh lease: account-refresh.ts), and a refused refresh
 * marking the account as needing reconnection.
 */
import type { Logger } from "pino";
import { configuredAccountId, isTokenLapsing, type AppAccount } from "../../domain/app-accounts.js";
import type { ValidatedComponent } from "../../domain/component-rules.js";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { AuthError, NotFoundError, ValidationError } from "../../domain/errors.js";
import type { Store } from "../../store/store.js";
import type { SecretBox } from "../secrets.js";
import { deletedAccountError, reconnectError } from "./account-errors.js";
import { AccountRefresher, type OAuthApp } from "./account-refresh.js";
import type { AppCatalog } from "./app-catalog.js";

export interface AccountAuthOptions {
  store: Store;
  secrets: SecretBox;
  catalog: AppCatalog;
  egressPolicy: EgressPolicy | null;
  logger?: Logger;
  now?: () => number;
  /** This process's instance id, named in the refresh leases it takes. */
  instanceId?: string;
}

/** An app prop's value as the runner takes it: the account's fields, or why the run cannot have them. */
export type AppPropValue = { $auth: Record<string, string>; $account: string } | { $auth: Record<string, never>; $authError: string };

export class AccountAuth {
  private readonly now: () => number;
  /** Refreshes in flight in this process, by account id: a run that needs one joins it, without asking the store. */
  private readonly refreshing = new Map<string, Promise<Record<string, string>>>();
  private readonly refresher: AccountRefresher;

  constructor(private readonly options: AccountAuthOptions) {
    this.now = options.now ?? Date.now;
    const { store, secrets, catalog, egressPolicy, logger, instanceId } = options;
    this.refresher = new AccountRefresher({ store, secrets, catalog, egressPolicy, now: this.now, ...(logger ? { logger } : {}), ...(instanceId ? { instanceId } : {}) });
  }

  /** The account's `$auth` fields, refreshed first when its token is about to lapse; an AuthError saying what to do when it cannot be used. */
  async fieldsOf(ownerId: string, accountId: string): Promise<Record<string, string>> {
    const account = await this.options.store.findAppAccount(ownerId, accountId);
    if (!account) throw new AuthError(`The connected account ${accountId} no longer exists (it was deleted). Connect one (runnel accounts connect <app>) and configure it on this prop again.`, { account: accountId });
    const app = await this.options.catalog.definition(account.app);
    if (account.health === "needs_reconnect") throw reconnectError(app, account, account.healthMessage);
    if (app.auth.type === "oauth" && this.isLapsing(account)) {
      let pending = this.refreshing.get(account.id);
      if (!pending) {
        pending = this.refresher.refresh(app as OAuthApp, account.ownerId, account.id, null).finally(() => this.refreshing.delete(account.id));
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
    if (!account) throw deletedAccountError(accountId);
    const app = await this.options.catalog.definition(account.app);
    if (account.health === "needs_reconnect") throw reconnectError(app, account, account.healthMessage);
    const fields = this.open(account);
    if (app.auth.type !== "oauth" || (stale !== null && fields.oauth_access_token !== stale)) return fields;
    let pending = this.refreshing.get(account.id);
    if (!pending) {
      pending = this.refresher.refresh(app as OAuthApp, ownerId, accountId, stale ?? fields.oauth_access_token ?? null).finally(() => this.refreshing.delete(account.id));
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
    return isTokenLapsing(account, this.now());
  }

  private open(account: AppAccount): Record<string, string> {
    return JSON.parse(this.options.secrets.open(account.sealedFields)) as Record<string, string>;
  }
}
