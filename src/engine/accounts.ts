import {
  apiKeyPrefix,
  generateApiKeySecret,
  hashApiKeySecret,
  EMAIL_RULE,
  isValidEmail,
  isValidUsername,
  looksLikeApiKey,
  USERNAME_RULE,
  type ApiKey,
  type User,
} from "../domain/accounts.js";
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from "../domain/errors.js";
import { newId } from "../domain/ids.js";
import type { PageRequest, PageSlice } from "../domain/paging.js";
import type { Store } from "../store/store.js";

/** Who is calling: the user and the key they authenticated with. */
export interface Principal {
  user: User;
  keyId: string;
  /** Set when the caller came with a console session cookie rather than the key itself. */
  sessionId?: string;
}

/** A key together with its secret, which is shown to its owner once and never stored. */
export interface IssuedApiKey {
  key: ApiKey;
  secret: string;
}

export interface AccountsOptions {
  store: Store;
  now?: () => number;
  /** How often a key's last-used time is written at most; keeps auth free of a write per request. */
  touchIntervalMs?: number;
  /**
   * Set when this server must serve one user only (it cannot keep one
   * user's code from reaching the server's network): why, for the refusal.
   */
  singleUserReason?: string | null;
}

export const ADMIN_USERNAME = "admin";

/** Users, API keys and authentication. */
export class Accounts {
  private readonly store: Store;
  private readonly now: () => number;
  private readonly touchIntervalMs: number;
  private readonly lastTouched = new Map<string, number>();
  private readonly singleUserReason: string | null;

  constructor(options: AccountsOptions) {
    this.singleUserReason = options.singleUserReason ?? null;
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  /** Resolves a Bearer secret to its user, or throws Unauthorized saying what to do. */
  async authenticate(secret: string): Promise<Principal> {
    if (!looksLikeApiKey(secret)) {
      throw new UnauthorizedError("The API key is not valid. Check the Authorization header: `Bearer rnl_…`.");
    }
    const found = await this.store.findApiKeyByHash(hashApiKeySecret(secret));
    if (!found) throw new UnauthorizedError("The API key is not valid. Check that you copied all of it.");
    if ("revoked" in found) {
      throw new UnauthorizedError(`The API key ${found.revoked.prefix}… was revoked. Use another key, or ask for a new one.`);
    }
    await this.recordUse(found.key.id);
    return { user: found.user, keyId: found.key.id };
  }

  /**
   * On the first start: creates the admin user and its first key (the given
   * secret, or a new one). Returns the secret to show once, or null when an
   * admin already exists.
   */
  async bootstrapAdmin(secret: string = generateApiKeySecret(), email: string | null = null): Promise<{ user: User; secret: string } | null> {
    const at = this.now();
    const created = await this.store.bootstrapAdmin({
      id: newId("user", at),
      username: ADMIN_USERNAME,
      email: email === null ? null : checkedEmail(email, "RUNNEL_ADMIN_EMAIL"),
      isAdmin: true,
      createdAt: at,
      key: { id: newId("apiKey", at), name: "admin (created on first start)", hash: hashApiKeySecret(secret), prefix: apiKeyPrefix(secret), createdAt: at },
    });
    return created ? { user: created.user, secret } : null;
  }

  async createUser(
    actor: Principal,
    input: { username: string; email?: string | null | undefined; isAdmin?: boolean | undefined },
  ): Promise<{ user: User; issued: IssuedApiKey }> {
    if (!actor.user.isAdmin) throw new ForbiddenError("Only an admin can create users. Ask an admin of this server.");
    if (!isValidUsername(input.username)) {
      throw new ValidationError("username", `username must be ${USERNAME_RULE}; got "${input.username}".`);
    }
    const email = input.email == null ? null : checkedEmail(input.email, "email");
    if (this.singleUserReason !== null) throw new ConflictError(this.singleUserReason);
    const at = this.now();
    const user = await this.store.createUser({
      id: newId("user", at),
      username: input.username,
      email,
      isAdmin: input.isAdmin ?? false,
      createdAt: at,
    });
    const issued = await this.issueKey(user.id, "first key");
    return { user, issued };
  }

  /** Every user of the server, newest first (admins only). */
  async listUsers(actor: Principal, page: PageRequest): Promise<PageSlice<User>> {
    if (!actor.user.isAdmin) throw new ForbiddenError("Only an admin can list the users of this server. Ask an admin.");
    return this.store.listUsers(page);
  }

  /** Sets or (null) clears the caller's own e-mail address: where error notices and `$.send.email` go. */
  async updateOwnEmail(actor: Principal, email: string | null): Promise<User> {
    const updated = await this.store.updateUserEmail(actor.user.id, email === null ? null : checkedEmail(email, "email"));
    if (!updated) throw new NotFoundError("user", actor.user.id);
    return updated;
  }

  /**
   * The admin's address from RUNNEL_ADMIN_EMAIL, for an admin made before it
   * was set: filled in only while the admin has none, so an address the
   * admin chose is never overwritten. Returns the admin when it was set.
   */
  async fillAdminEmail(email: string): Promise<User | null> {
    const admin = await this.store.findUserByUsername(ADMIN_USERNAME);
    if (!admin || !admin.isAdmin || admin.email !== null) return null;
    return this.store.updateUserEmail(admin.id, checkedEmail(email, "RUNNEL_ADMIN_EMAIL"));
  }

  createApiKey(actor: Principal, name: string | undefined): Promise<IssuedApiKey> {
    return this.issueKey(actor.user.id, name?.trim() || "unnamed key");
  }

  listApiKeys(actor: Principal, page: PageRequest): Promise<PageSlice<ApiKey>> {
    return this.store.listApiKeys(actor.user.id, page);
  }

  async revokeApiKey(actor: Principal, keyId: string): Promise<void> {
    const revoked = await this.store.revokeApiKey(actor.user.id, keyId, this.now());
    if (!revoked) throw new NotFoundError("API key", keyId);
  }

  private async issueKey(ownerId: string, name: string): Promise<IssuedApiKey> {
    const at = this.now();
    const secret = generateApiKeySecret();
    const key = await this.store.createApiKey({
      id: newId("apiKey", at),
      ownerId,
      name,
      hash: hashApiKeySecret(secret),
      prefix: apiKeyPrefix(secret),
      createdAt: at,
    });
    return { key, secret };
  }

  private async recordUse(keyId: string): Promise<void> {
    const at = this.now();
    const last = this.lastTouched.get(keyId);
    if (last !== undefined && at - last < this.touchIntervalMs) return;
    this.lastTouched.set(keyId, at);
    await this.store.touchApiKey(keyId, at);
  }
}

/** The address trimmed, or a 400 naming the field and what an address looks like. */
function checkedEmail(email: string, field: string): string {
  const trimmed = email.trim();
  if (!isValidEmail(trimmed)) throw new ValidationError(field, `${field} must be ${EMAIL_RULE}; got "${email}".`);
  return trimmed;
}
