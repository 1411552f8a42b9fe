import type { ApiKey, User } from "../domain/accounts.js";
import type { PageRequest, PageSlice } from "../domain/paging.js";

/**
 * The Store port. It speaks the domain, never SQL: every method is one
 * operation the engine needs, and every read or write of a user's data takes
 * the owner's id, so one user can never reach another's rows.
 */
export interface Store {
  /** Which adapter this is, for logs and /healthz. */
  readonly kind: "sqlite" | "postgres";

  /** Applies pending migrations; safe to call from many processes at once. */
  migrate(): Promise<void>;
  /** Cheap round trip, for health checks. */
  ping(): Promise<void>;
  /** Closes the pool; the store must not be used afterwards. */
  close(): Promise<void>;

  createUser(input: NewUser): Promise<User>;
  /** Creates the first admin and its key unless an admin exists; returns null when one did. */
  bootstrapAdmin(input: NewUser & { key: NewApiKeyFields }): Promise<{ user: User; key: ApiKey } | null>;
  findUser(userId: string): Promise<User | null>;
  findUserByUsername(username: string): Promise<User | null>;

  createApiKey(input: NewApiKeyFields & { ownerId: string }): Promise<ApiKey>;
  /** The active (unrevoked) key with this hash and its owner, or null. */
  findApiKeyByHash(hash: string): Promise<{ key: ApiKey; user: User } | { revoked: ApiKey } | null>;
  listApiKeys(ownerId: string, page: PageRequest): Promise<PageSlice<ApiKey>>;
  /** Marks the owner's key revoked; false when the owner has no such key. Idempotent. */
  revokeApiKey(ownerId: string, keyId: string, at: number): Promise<boolean>;
  /** Records use of a key, at most as often as the caller decides. */
  touchApiKey(keyId: string, at: number): Promise<void>;
}

export interface NewUser {
  id: string;
  username: string;
  email: string | null;
  isAdmin: boolean;
  createdAt: number;
}

export interface NewApiKeyFields {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  createdAt: number;
}
