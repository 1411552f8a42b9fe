import type { ApiKey, User } from "../domain/accounts.js";
import type { DedupeStrategy, PendingEmit, Rejection } from "../domain/dedupe.js";
import type { PageRequest, PageSlice } from "../domain/paging.js";
import type { DeployedSource, LogEntry, SavedComponent, StoredEvent } from "../domain/sources.js";
import type { Delivery, Subscription } from "../domain/subscriptions.js";

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

  /** Saves a component; when the owner already saved the very same code, returns that one instead. */
  saveComponent(component: SavedComponent): Promise<SavedComponent>;
  /** The owner's newest component with this code (sha256), so a redeploy can reuse its package lock. */
  findComponentByCode(ownerId: string, codeHash: string): Promise<SavedComponent | null>;
  /** By id (`sc_…`), or the newest of the owner's components with that key. */
  findComponent(ownerId: string, idOrKey: string): Promise<SavedComponent | null>;

  /** Creates a source with its initial key-value store; Conflict when the slug is taken. */
  createSource(source: DeployedSource, db: Record<string, unknown>): Promise<DeployedSource>;
  /** By id (`dc_…`) or name slug. */
  findSource(ownerId: string, idOrSlug: string): Promise<DeployedSource | null>;
  /** The source behind a public HTTP endpoint; no owner, since the caller has none. */
  findSourceByEndpoint(token: string): Promise<DeployedSource | null>;
  listSources(ownerId: string, page: PageRequest): Promise<PageSlice<DeployedSource>>;
  /** The owner's slugs equal to `base` or starting with `base-`, to pick a free one. */
  takenSlugs(ownerId: string, base: string): Promise<Set<string>>;
  /** Replaces the source's fields (scoped by its owner); Conflict when the new slug is taken. */
  updateSource(source: DeployedSource, db?: Record<string, unknown>): Promise<void>;
  /** Removes the source with its events, logs and state; false when the owner has none such. */
  deleteSource(ownerId: string, sourceId: string): Promise<boolean>;
  readSourceDb(ownerId: string, sourceId: string): Promise<Record<string, unknown>>;

  /** Active timer sources due at or before `now`, earliest first. */
  dueTimers(now: number, limit: number): Promise<Array<{ id: string; ownerId: string; nextTickAt: number }>>;
  /** When the earliest active timer is due, or null when none is scheduled. */
  nextTimerDueAt(): Promise<number | null>;
  /** Moves a tick from `dueAt` to `nextAt` unless another process did first: true for the one that claimed it. */
  claimTick(sourceId: string, dueAt: number, nextAt: number): Promise<boolean>;

  /**
   * In one transaction: dedupe against the emitter's state, assign ids, append,
   * trim each touched channel to the retention, record a delivery for each
   * subscription that matches an event, and (for a source's run) write its
   * key-value store.
   */
  appendEvents(batch: EventBatch): Promise<AppendResult>;
  listEvents(ownerId: string, emitterId: string, query: { channel?: string | null; page: PageRequest }): Promise<PageSlice<StoredEvent>>;
  /** Deletes events in an inclusive id range (all without bounds); returns how many. */
  deleteEvents(ownerId: string, emitterId: string, range: { startId?: string | undefined; endId?: string | undefined }): Promise<number>;
  /** Creates a subscription, or returns the one that exists already for the same emitter, listener and event name. */
  subscribe(subscription: Subscription): Promise<Subscription>;
  /** Removes a subscription; false when the owner has none such. */
  unsubscribe(ownerId: string, key: { emitterId: string; listenerId: string; eventName: string }): Promise<boolean>;
  listSubscriptions(ownerId: string): Promise<Subscription[]>;
  /** Deliveries waiting for a listener, oldest first (what the bus recorded with the events). */
  pendingDeliveries(listenerId: string, limit: number): Promise<Delivery[]>;

  appendLogs(ownerId: string, emitterId: string, entries: Array<Pick<LogEntry, "stream" | "text" | "ts">>): Promise<LogEntry[]>;
  listLogs(ownerId: string, emitterId: string, page: PageRequest): Promise<PageSlice<LogEntry>>;
}

export interface EventBatch {
  ownerId: string;
  emitterId: string;
  /** In emit order (already ordered by ts where given). */
  emits: PendingEmit[];
  dedupe: DedupeStrategy | null;
  /** Events kept per channel. */
  retention: number;
  now: number;
  /** A source's key-value store after its invocation, written in the same transaction. */
  sourceDb?: Record<string, unknown> | null | undefined;
}

export interface AppendResult {
  events: StoredEvent[];
  /** The emits that became `events`, in the same order (the very objects passed in). */
  accepted: PendingEmit[];
  rejected: Rejection[];
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
