/**
 * Each user's connected accounts: key-based ones made from their fields,
 * OAuth ones through the authorization code flow with PKCE (a one-time
 * `state` kept server-side, hashed, for ten minutes), listed without any
 * secret, renamed, reconnected and deleted. Another user's account is "not
 * found".
 */
import { checkAccountName, hashState, newOAuthState, newPkcePair, OAUTH_FLOW_TTL_MS, pkceChallenge, type AppAccount } from "../../domain/app-accounts.js";
import { checkKeyAccountFields, type AppDefinition, type KeysAppAuth, type OAuthAppAuth } from "../../domain/apps.js";
import { describeValue } from "../../domain/describe-value.js";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { NotFoundError, RunnelError, ValidationError } from "../../domain/errors.js";
import { newId } from "../../domain/ids.js";
import type { Store } from "../../store/store.js";
import type { SecretBox } from "../secrets.js";
import type { AppCatalog } from "./app-catalog.js";
import { OAuthBrowserBinding } from "./oauth-browser-binding.js";
import { exchangeCode, TokenRequestError } from "./oauth-token-client.js";

/** The most accounts one user may keep. */
export const MAX_ACCOUNTS_PER_USER = 500;

export interface AppAccountsServiceOptions {
  store: Store;
  secrets: SecretBox;
  catalog: AppCatalog;
  egressPolicy: EgressPolicy | null;
  /** `${RUNNEL_PUBLIC_URL}/oauth/callback`, known once the server listens. */
  callbackUrl: () => string;
  now?: () => number;
}

/** An account with what the API shows beside it. */
export interface AccountEntry {
  account: AppAccount;
  app: AppDefinition;
}

const USED_OR_EXPIRED = "This connection link was used already or has expired (they last 10 minutes). Start connecting the account again.";

/** A connection waiting for its browser: what Runnel's authorize page shows, and where it sends the browser on. */
export interface PendingOAuthFlow {
  stateHash: string;
  ownerId: string;
  /** The starter's username, shown so that a person who did not start it can tell. */
  ownerName: string;
  appName: string;
  accountName: string;
  reconnect: boolean;
  providerUrl: string;
}

/** A callback that could not finish: said on the page the browser lands on. */
export class OAuthCallbackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OAuthCallbackError";
  }
}

export class AppAccountsService {
  /** The cookie that ties a connection to the browser that confirmed it (/oauth/authorize sets it, /oauth/callback checks it). */
  readonly binding: OAuthBrowserBinding;
  private readonly now: () => number;

  constructor(private readonly options: AppAccountsServiceOptions) {
    this.now = options.now ?? Date.now;
    this.binding = new OAuthBrowserBinding(options.secrets);
  }

  async list(ownerId: string): Promise<AccountEntry[]> {
    const accounts = await this.options.store.listAppAccounts(ownerId);
    const entries: AccountEntry[] = [];
    for (const account of accounts) entries.push({ account, app: await this.appOf(account) });
    return entries;
  }

  async get(ownerId: string, accountId: string): Promise<AccountEntry> {
    const account = await this.find(ownerId, accountId);
    return { account, app: await this.appOf(account) };
  }

  /** POST /v1/accounts: a key-based app's account, its fields checked against the app's definition. */
  async createWithKeys(ownerId: string, body: { app?: unknown; name?: unknown; fields?: unknown }): Promise<AccountEntry> {
    const app = await this.keysApp(body.app);
    const name = checkAccountName(body.name);
    const fields = checkKeyAccountFields(app, body.fields);
    await this.checkRoom(ownerId);
    const at = this.now();
    const account: AppAccount = { id: newId("appAccount", at), ownerId, app: app.slug, name, sealedFields: this.seal(fields), expiresAt: null, health: "ok", healthMessage: null, createdAt: at, updatedAt: at };
    await this.options.store.createAppAccount(account);
    return { account, app };
  }

  async rename(ownerId: string, accountId: string, body: { name?: unknown }): Promise<AccountEntry> {
    const account = await this.find(ownerId, accountId);
    const next = { ...account, name: checkAccountName(body.name), updatedAt: this.now() };
    await this.options.store.updateAppAccount(next);
    return { account: next, app: await this.appOf(next) };
  }

  async remove(ownerId: string, accountId: string): Promise<void> {
    if (!(await this.options.store.deleteAppAccount(ownerId, accountId))) throw notFound(accountId);
  }

  /**
   * Reconnect: a key-based account takes new fields at once; an OAuth one
   * goes through the provider again (the answer is where to send the
   * browser), and keeps its id, so every prop configured with it is fixed.
   */
  async reconnect(ownerId: string, accountId: string, body: { fields?: unknown }): Promise<{ entry: AccountEntry } | { authorizationUrl: string; expiresAt: number }> {
    const account = await this.find(ownerId, accountId);
    const app = await this.appOf(account);
    if (app.auth.type === "oauth") return this.beginFlow(ownerId, app as AppDefinition & { auth: OAuthAppAuth }, account.name, account.id);
    if (app.auth.type !== "keys") throw new ValidationError("app", `${app.name} needs no account: there is nothing to reconnect.`);
    const fields = checkKeyAccountFields(app as AppDefinition & { auth: KeysAppAuth }, body.fields);
    const next: AppAccount = { ...account, sealedFields: this.seal(fields), health: "ok", healthMessage: null, updatedAt: this.now() };
    await this.options.store.updateAppAccount(next);
    return { entry: { account: next, app } };
  }

  /** POST /v1/accounts/oauth/start: where to send the browser to connect a new account. */
  async startOAuth(ownerId: string, body: { app?: unknown; name?: unknown }): Promise<{ authorizationUrl: string; expiresAt: number }> {
    if (typeof body.app !== "string") throw new ValidationError("app", `app must be an OAuth app's slug (like github); got ${describeValue(body.app)}.`);
    const app = await this.options.catalog.definition(body.app);
    if (app.auth.type !== "oauth") {
      throw new ValidationError("app", app.auth.type === "keys" ? `${app.name} connects with keys, not OAuth: POST /v1/accounts { app, name, fields } (runnel accounts connect ${app.slug} asks for them).` : `${app.name} needs no account.`);
    }
    const name = checkAccountName(body.name);
    await this.checkRoom(ownerId);
    return this.beginFlow(ownerId, app as AppDefinition & { auth: OAuthAppAuth }, name, null);
  }

  /**
   * GET /oauth/callback: the provider sent the browser back. The state is
   * taken once (a replayed callback finds nothing), the code exchanged with
   * the PKCE verifier, and the account stored (or, on reconnect, its tokens
   * replaced).
   */
  async finishOAuth(query: { state?: unknown; code?: unknown; error?: unknown; error_description?: unknown }, binding: (stateHash: string) => boolean): Promise<AccountEntry> {
    if (typeof query.state !== "string" || query.state === "") throw new OAuthCallbackError("This page was opened without the state the connection started with. Start connecting the account again.");
    const stateHash = hashState(query.state);
    // A code would connect an account: only in the browser that confirmed the connection (a refusal connects nothing).
    if (typeof query.error !== "string" && !binding(stateHash)) {
      if (!(await this.options.store.findOAuthFlow(stateHash, this.now()))) throw new OAuthCallbackError(USED_OR_EXPIRED);
      throw new OAuthCallbackError(
        "This connection was not started in this browser, so it was not finished: an account is connected only in the browser that opened Runnel's connection link. Open that link again in this browser, or start connecting the account again.",
      );
    }
    const flow = await this.options.store.takeOAuthFlow(stateHash, this.now());
    if (!flow) throw new OAuthCallbackError(USED_OR_EXPIRED);
    const app = await this.options.catalog.definition(flow.app);
    if (app.auth.type !== "oauth") throw new OAuthCallbackError(`${app.name} is no longer an OAuth app on this server.`);
    if (typeof query.error === "string") {
      const why = typeof query.error_description === "string" ? `${query.error}: ${query.error_description.slice(0, 200)}` : query.error;
      throw new OAuthCallbackError(`${app.name} did not grant access (${why}). Nothing was connected; start again if this was a mistake.`);
    }
    if (typeof query.code !== "string" || query.code === "") throw new OAuthCallbackError(`${app.name} sent the browser back without a code. Start connecting the account again.`);
    const oauthApp = app as AppDefinition & { auth: OAuthAppAuth };
    const at = this.now();
    let grant;
    try {
      const verifier = oauthApp.auth.pkce ? this.options.secrets.open(flow.sealedVerifier) : null;
      grant = await exchangeCode({ auth: oauthApp.auth, client: await this.options.catalog.clientFor(oauthApp), policy: this.options.egressPolicy, now: at }, query.code, this.options.callbackUrl(), verifier);
    } catch (error) {
      if (error instanceof TokenRequestError) throw new OAuthCallbackError(`${app.name} refused to give a token for this connection: ${error.message}. Check the app's OAuth client (its id, secret and redirect URL ${this.options.callbackUrl()}), then start again.`);
      if (error instanceof RunnelError) throw new OAuthCallbackError(error.message);
      throw error;
    }
    const sealedFields = this.seal({ ...grant.tokens });
    if (flow.accountId) {
      const current = await this.options.store.findAppAccount(flow.ownerId, flow.accountId);
      if (current) {
        const next: AppAccount = { ...current, sealedFields, expiresAt: grant.expiresAt, health: "ok", healthMessage: null, updatedAt: at };
        await this.options.store.updateAppAccount(next);
        return { account: next, app };
      }
    }
    const account: AppAccount = { id: newId("appAccount", at), ownerId: flow.ownerId, app: app.slug, name: flow.name, sealedFields, expiresAt: grant.expiresAt, health: "ok", healthMessage: null, createdAt: at, updatedAt: at };
    await this.options.store.createAppAccount(account);
    return { account, app };
  }

  private async beginFlow(ownerId: string, app: AppDefinition & { auth: OAuthAppAuth }, name: string, accountId: string | null): Promise<{ authorizationUrl: string; expiresAt: number }> {
    // Checked now: a missing client is said at once, not on the page the user opens.
    await this.options.catalog.clientFor(app);
    const state = newOAuthState();
    const pkce = newPkcePair();
    const at = this.now();
    const expiresAt = at + OAUTH_FLOW_TTL_MS;
    await this.options.store.createOAuthFlow({ stateHash: hashState(state), ownerId, app: app.slug, name, accountId, sealedVerifier: this.options.secrets.seal(pkce.verifier), expiresAt, createdAt: at });
    // Runnel's own page first: it binds the flow to the browser that opens it (see OAuthBrowserBinding), then sends it on.
    const url = new URL("/oauth/authorize", this.options.callbackUrl());
    url.searchParams.set("state", state);
    return { authorizationUrl: url.toString(), expiresAt };
  }

  /**
   * GET /oauth/authorize: the flow a state starts, who started it, and the
   * provider's address to send the browser to (with the flow's PKCE
   * challenge). The flow stays: it is taken by the callback.
   */
  async pendingFlow(state: unknown): Promise<PendingOAuthFlow> {
    if (typeof state !== "string" || state === "") throw new OAuthCallbackError("This page was opened without the state of a connection. Start connecting the account again.");
    const stateHash = hashState(state);
    const flow = await this.options.store.findOAuthFlow(stateHash, this.now());
    if (!flow) throw new OAuthCallbackError(USED_OR_EXPIRED);
    const app = await this.options.catalog.definition(flow.app);
    if (app.auth.type !== "oauth") throw new OAuthCallbackError(`${app.name} is no longer an OAuth app on this server.`);
    const oauthApp = app as AppDefinition & { auth: OAuthAppAuth };
    const client = await this.options.catalog.clientFor(oauthApp);
    const url = new URL(oauthApp.auth.authorizeUrl);
    const params: Record<string, string> = { ...oauthApp.auth.authorizeParams, response_type: "code", client_id: client.clientId, redirect_uri: this.options.callbackUrl(), state };
    if (oauthApp.auth.scopes.length > 0) params.scope = oauthApp.auth.scopes.join(oauthApp.auth.scopeSeparator);
    if (oauthApp.auth.pkce) {
      params.code_challenge = pkceChallenge(this.options.secrets.open(flow.sealedVerifier));
      params.code_challenge_method = "S256";
    }
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    const owner = await this.options.store.findUser(flow.ownerId);
    return { stateHash, ownerId: flow.ownerId, ownerName: owner?.username ?? flow.ownerId, appName: app.name, accountName: flow.name, reconnect: flow.accountId !== null, providerUrl: url.toString() };
  }

  private async find(ownerId: string, accountId: string): Promise<AppAccount> {
    const account = await this.options.store.findAppAccount(ownerId, accountId);
    if (!account) throw notFound(accountId);
    return account;
  }

  private async keysApp(slug: unknown): Promise<AppDefinition & { auth: KeysAppAuth }> {
    if (typeof slug !== "string") throw new ValidationError("app", `app must be an app's slug (like stripe); got ${describeValue(slug)}.`);
    const app = await this.options.catalog.definition(slug);
    if (app.auth.type === "oauth") throw new ValidationError("app", `${app.name} connects through OAuth: POST /v1/accounts/oauth/start { app, name } (runnel accounts connect ${app.slug}) gives the address to open.`);
    if (app.auth.type !== "keys") throw new ValidationError("app", `${app.name} needs no account.`);
    return app as AppDefinition & { auth: KeysAppAuth };
  }

  private async appOf(account: AppAccount): Promise<AppDefinition> {
    try {
      return await this.options.catalog.definition(account.app);
    } catch {
      // An app an admin removed from the server: the account is still listed, to be deleted.
      return { slug: account.app, name: account.app, auth: { type: "none" }, shipped: false };
    }
  }

  private async checkRoom(ownerId: string): Promise<void> {
    if ((await this.options.store.listAppAccounts(ownerId)).length >= MAX_ACCOUNTS_PER_USER) {
      throw new ValidationError("app", `You have ${MAX_ACCOUNTS_PER_USER} connected accounts, the most one user may keep. Delete some you no longer use (runnel accounts delete <id>).`);
    }
  }

  private seal(fields: Record<string, string>): string {
    return this.options.secrets.seal(JSON.stringify(fields));
  }
}

function notFound(accountId: string): NotFoundError {
  const error = new NotFoundError("connected account", accountId);
  error.message = `You have no connected account "${accountId}". runnel accounts list (GET /v1/accounts) shows yours.`;
  return error;
}
