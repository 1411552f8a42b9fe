import type { LineChain } from "./run-gate-work.js";
import type { ApiKey, User } from "../domain/accounts.js";
import type { ActivityWindow, EmitterEventStats, WorkflowRunStats } from "../domain/activity.js";
import type { DataStoreRecord, DataStoreSummary, StepStoreWrite } from "../domain/data-stores.js";
import type { DedupeStrategy, PendingEmit, Rejection } from "../domain/dedupe.js";
import type { MailStatus, OutboxEntry } from "../domain/outbox.js";
import type { PageRequest, PageSlice } from "../domain/paging.js";
import type { CatalogComponent, CatalogEntry, RegistryEntry } from "../domain/registry.js";
import type { PublishedApp, PublishedAppEntry } from "../domain/published-apps.js";
import type { DeployedSource, LogEntry, SavedComponent, StoredEvent } from "../domain/sources.js";
import type { Delivery, DeliveryKey, Subscription } from "../domain/subscriptions.js";
import type { Webhook, WebhookDelivery } from "../domain/webhooks.js";
import type { NewOutboxSend, OutboxSend, SendSettlement } from "../domain/durable-sends.js";
import type { EnvVar } from "../domain/env-vars.js";
import type { AppAccount, AppAccountRefresh, OAuthFlow, RefreshFailure } from "../domain/app-accounts.js";
import type { AppDefinition } from "../domain/apps.js";
import type { Workflow, WorkflowRun, WorkflowStep } from "../domain/workflows.js";
import type { WorkflowVersion } from "../domain/workflow-versions.js";
import type { DeliveryQueueStats, ProcessRecord } from "../domain/processes.js";
import type { GateStats, WaitingEvent } from "../domain/run-gate.js";

/**
 * The Store port. It speaks the domain, never SQL: every method is one
 * operation the engine needs, and every read or write of a user's data takes
 * the owner's id, so one user can never reach another's rows.
 */
/** What a master key rotation re-sealed: rows of each kind that held a sealed value, and the values. */
/** An app's OAuth client as stored: the secret sealed. */
export interface StoredOAuthClient {
  app: string;
  clientId: string;
  sealedSecret: string;
  updatedAt: number;
}

export interface ResealCounts {
  sources: number;
  workflows: number;
  /** Secret environment variables. */
  envVars: number;
  webhooks: number;
  /** Connected accounts of apps (their fields), OAuth clients' secrets and connections in progress. */
  appAccounts: number;
  oauthClients: number;
  values: number;
}

export interface Store {
  /** Which adapter this is, for logs and /healthz. */
  readonly kind: "sqlite" | "postgres";
  /**
   * Hot writes (appendEvents, claimDeliveries, finishRuns) asked for in one turn of the event
   * loop are committed together once it ends (SQLite's group commit): a
   * caller that wants the turn's other work done first need not wait for it
   * itself.
   */
  readonly groupsWritesByTurn: boolean;

  /** Applies pending migrations; safe to call from many processes at once. */
  migrate(): Promise<void>;
  /** Cheap round trip, for health checks. */
  ping(): Promise<void>;
  /**
   * Runs `work` while no other process of the installation runs work under
   * the same name (PostgreSQL: an advisory lock of the schema's, held on a
   * connection of its own for the work's time; SQLite, one process: work
   * under one name one at a time). For start-up chores that two processes
   * starting together must not both do (the queue's timer schedules).
   */
  exclusively<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** The migrations this release knows that the database has not applied (empty once migrate() ran): readiness. */
  pendingMigrations(): Promise<string[]>;
  /** Closes the pool; the store must not be used afterwards. */
  close(): Promise<void>;

  /** Records this process (or its new heartbeat and load) in the process registry, by instance id. */
  recordProcess(record: ProcessRecord): Promise<void>;
  /** Takes a process out of the registry (its graceful stop). */
  removeProcess(instanceId: string): Promise<void>;
  /** Every process of the registry, live or lost, oldest start first. */
  listProcesses(): Promise<ProcessRecord[]>;
  /** The delivery queue's depth and its oldest wait, in one cheap query (metrics scrapes, status). */
  deliveryQueueStats(now: number): Promise<DeliveryQueueStats>;

  createUser(input: NewUser): Promise<User>;
  /** Creates the first admin and its key unless an admin exists; returns null when one did. */
  bootstrapAdmin(input: NewUser & { key: NewApiKeyFields }): Promise<{ user: User; key: ApiKey } | null>;
  findUser(userId: string): Promise<User | null>;
  findUserByUsername(username: string): Promise<User | null>;
  /** Sets (or, with null, clears) the user's e-mail address; the user as it now is, or null when there is no such user. */
  updateUserEmail(userId: string, email: string | null): Promise<User | null>;
  /** How many users exist (a server that cannot isolate user code's network serves one). */
  countUsers(): Promise<number>;
  /** Every user, newest first, by page (an admin's list). */
  listUsers(page: PageRequest): Promise<PageSlice<User>>;

  /**
   * Every sealed value kept (sources' configured props, workflow steps'
   * props, secret environment variables, webhooks' signing secrets) passed
   * to `reseal`, which returns its replacement or null for a value that is
   * not sealed; all replaced in one transaction. Counts the rows changed of
   * each kind and the values.
   */
  resealSecrets(reseal: (value: string) => string | null): Promise<ResealCounts>;
  /**
   * Rewrites the storage of workflows so that nothing of rows overwritten
   * before (secrets stored in the clear by an older release) stays in freed
   * pages or dead tuples: SQLite VACUUM and a truncating checkpoint,
   * PostgreSQL VACUUM FULL of the table. Slow on a big database; run rarely.
   */
  purgeFreedSpace(): Promise<void>;
  /** Every workflow's id, owner and steps, across owners (a start-up pass over what is stored). */
  listAllWorkflowSteps(): Promise<Array<{ id: string; ownerId: string; steps: WorkflowStep[] }>>;
  /** One sealed value kept anywhere, or null: which key opens it tells which key is in force. */
  anySealedValue(isSealed: (value: string) => boolean): Promise<string | null>;

  createApiKey(input: NewApiKeyFields & { ownerId: string }): Promise<ApiKey>;
  /** The active (unrevoked) key with this hash and its owner, or null. */
  findApiKeyByHash(hash: string): Promise<{ key: ApiKey; user: User } | { revoked: ApiKey } | null>;
  listApiKeys(ownerId: string, page: PageRequest): Promise<PageSlice<ApiKey>>;
  /** Marks the owner's key revoked; false when the owner has no such key. Idempotent. */
  revokeApiKey(ownerId: string, keyId: string, at: number): Promise<boolean>;
  /** Records use of a key, at most as often as the caller decides. */
  touchApiKey(keyId: string, at: number): Promise<void>;

  /** Saves a console session or a one-time sign-in link (only its token's hash). */
  createSession(input: NewSession): Promise<void>;
  /** The session (not a link) with this token hash, and whether the key it was made with is revoked; null when none. */
  findSession(tokenHash: string): Promise<StoredSession | null>;
  /** Records a session's use, at most as often as the caller decides (its idle expiry counts from it). */
  touchSession(id: string, at: number): Promise<void>;
  deleteSession(id: string): Promise<void>;
  /**
   * Marks an unused, unexpired sign-in link used and returns whose it is;
   * null when it is unknown, used, expired or its key is revoked. Once only,
   * even for two callers at the same moment.
   */
  useSignInLink(tokenHash: string, at: number): Promise<{ ownerId: string; apiKeyId: string } | null>;
  /** Forgets sessions and links whose hard expiry has passed. */
  deleteExpiredSessions(at: number): Promise<void>;

  /** Saves a component; when the owner already saved the very same code, returns that one instead. */
  saveComponent(component: SavedComponent): Promise<SavedComponent>;
  /** The owner's newest component with this code (sha256), so a redeploy can reuse its package lock. */
  findComponentByCode(ownerId: string, codeHash: string): Promise<SavedComponent | null>;
  /** By id (`sc_…`), or the newest of the owner's components with that key. */
  findComponent(ownerId: string, idOrKey: string): Promise<SavedComponent | null>;

  /**
   * Publishes a version to the owner's registry. When (owner, key, version) is
   * published already, returns that entry untouched with `created: false`
   * (versions are immutable; the caller decides whether that is a conflict).
   * Race-safe: of concurrent publishes of one version, exactly one creates it.
   */
  publish(entry: RegistryEntry): Promise<{ entry: RegistryEntry; created: boolean }>;
  /**
   * The owner's published `key` at `version`; without a version, the highest
   * by semver precedence (a release before any pre-release), never by text.
   * Null when the owner published no such key or version.
   */
  findPublished(ownerId: string, key: string, version?: string): Promise<RegistryEntry | null>;
  /** Every version the owner published: keys alphabetically, each key's versions newest first. */
  listPublished(ownerId: string): Promise<RegistryEntry[]>;

  /**
   * Adds a version to Runnel's catalog (no owner: every user sees it). True
   * when added; false when (key, version) is there already, which is left
   * untouched (versions never change). Race-safe across processes.
   */
  addCatalogVersion(component: CatalogComponent): Promise<boolean>;
  /** Every catalog version without its code: keys alphabetically, each key's versions newest first. */
  listCatalog(): Promise<CatalogEntry[]>;
  /** A catalog key at `version`, or its highest release; null when there is none. */
  findCatalogComponent(key: string, version?: string): Promise<CatalogComponent | null>;

  /**
   * Publishes a version of an app file to the owner's registry. When (owner,
   * slug, version) is published already, returns that version untouched with
   * `created: false`. Race-safe, as `publish`.
   */
  publishApp(app: PublishedApp): Promise<{ app: PublishedAppEntry; created: boolean }>;
  /** The owner's app `slug` at `version`, or its highest release; null when there is none. */
  findPublishedApp(ownerId: string, slug: string, version?: string): Promise<PublishedApp | null>;
  /** Every app version the owner published, without code: slugs alphabetically, each slug's versions newest first. */
  listPublishedApps(ownerId: string): Promise<PublishedAppEntry[]>;

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
  /** Whether a run of the timer source's tick due at `dueAtMs` was recorded (EventBatch.ticks). */
  timerTickRecorded(sourceId: string, dueAtMs: number): Promise<boolean>;

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
  /** Deletes the emitter's events in the inclusive id range (all without one), of one channel when `channel` is given ("" the default). */
  deleteEvents(ownerId: string, emitterId: string, range: { startId?: string | undefined; endId?: string | undefined; channel?: string | undefined }): Promise<number>;
  /** Creates a subscription, or returns the one that exists already for the same emitter, listener and event name. */
  subscribe(subscription: Subscription): Promise<Subscription>;
  /** Removes a subscription; false when the owner has none such. */
  unsubscribe(ownerId: string, key: { emitterId: string; listenerId: string; eventName: string }): Promise<boolean>;
  listSubscriptions(ownerId: string): Promise<Subscription[]>;
  /** Deliveries waiting for a listener, oldest first (what the bus recorded with the events). */
  pendingDeliveries(listenerId: string, limit: number): Promise<Delivery[]>;

  /**
   * Takes up to `limit` deliveries that are due (pending, or running with an
   * expired lease: their process died), oldest first, and leases them until
   * `now + leaseMs`; another claimer does not get them meanwhile.
   */
  claimDeliveries(options: { now: number; leaseMs: number; limit: number; claimer?: string | undefined }): Promise<ClaimedDelivery[]>;
  /** Puts leased deliveries back to wait until `availableAt` (the listener could not take them now). */
  releaseDeliveries(keys: DeliveryKey[], availableAt: number): Promise<void>;
  /**
   * Leased deliveries become due at once: every one (the embedded server
   * starting: nobody else holds a lease), or those `claimer` held (a process
   * of a shared database starting again: its previous run's leases).
   */
  requeueDeliveries(now: number, claimer?: string): Promise<number>;
  /**
   * Renews the leases of the deliveries `claimer` holds (running, claimed by
   * it; null: those claimed without an id) until `until`, in one statement.
   * Answers how many it renewed: 0, the claimer holds none.
   */
  renewDeliveryLeases(claimer: string | null, until: number): Promise<number>;
  /**
   * Adds deliveries that no append records: a replay of an error's original
   * event, or those an append handed over unrecorded. With `lease`, they are
   * recorded running, claimed by `claimer` until `until` (their run goes on
   * in this process), else pending from their `availableAt`.
   */
  enqueueDeliveries(deliveries: NewDelivery[], lease?: { claimer: string | null; until: number }): Promise<void>;
  /**
   * In one transaction: records finished runs (a run whose key is recorded
   * already is left as it was, unless that record waits to retry a step and
   * this one is a later attempt: `retrying` rows are replaced), removes their deliveries, appends the events
   * the runs produced (`$errors`, `$.send.emit`), puts the other sends of the
   * runs recorded now in the send outbox (those of a run recorded before are
   * left out: they were enqueued with it), and trims old runs.
   */
  finishRuns(input: FinishRunsInput): Promise<FinishedRuns>;
  /**
   * The `$.service.db` of each of a workflow's steps (by step id; `{}` for a
   * step with none). What runs change is written by finishRuns
   * (`stepStores`), key by key, for the runs it records now.
   */
  readStepStores(ownerId: string, workflowId: string, stepIds: string[]): Promise<Record<string, Record<string, unknown>>>;

  /** The owner's data stores by name, with their live (unexpired) key counts and sizes. */
  listDataStores(ownerId: string, now: number): Promise<DataStoreSummary[]>;
  /** A live record of the owner's store, or null (no such store, key, or it expired). */
  dataStoreGet(ownerId: string, name: string, key: string, now: number): Promise<DataStoreRecord | null>;
  /**
   * Writes a record (`json`: the value as JSON text), creating the store on
   * its first write. Race-safe. Throws PayloadTooLarge past a limit of
   * DATA_STORE_LIMITS (stores per owner, keys per store, the owner's bytes).
   */
  dataStoreSet(ownerId: string, name: string, record: { key: string; json: string; expiresAt: number | null }, now: number): Promise<void>;
  /** Removes a record; false when the store had no live record of that key. */
  dataStoreDelete(ownerId: string, name: string, key: string, now: number): Promise<boolean>;
  /** A page of the store's live records, by key ascending after `after`; null when the owner has no such store. */
  dataStoreRecords(ownerId: string, name: string, query: { limit: number; after?: string | undefined }, now: number): Promise<PageSlice<DataStoreRecord> | null>;
  /** Removes every record of the store (the store stays); returns how many rows went. */
  dataStoreClear(ownerId: string, name: string): Promise<number>;
  /** Removes the store and its records; false when the owner has none such. */
  deleteDataStore(ownerId: string, name: string): Promise<boolean>;
  /**
   * Takes up to `limit` sends of the outbox that are due (waiting, or leased
   * with an expired lease: their process died), oldest first, counts the
   * attempt and leases them until `now + leaseMs`.
   */
  claimSends(options: { now: number; leaseMs: number; limit: number; claimer?: string | undefined }): Promise<OutboxSend[]>;
  /** Leased sends become due at once: every one (the embedded server starting), or those `claimer` held. */
  requeueSends(now: number, claimer?: string): Promise<number>;
  /**
   * In one transaction, for the attempt `send.attempts` of a claimed send:
   * writes its outcome into the run's send record, removes the send
   * (delivered, or failed for good) or puts it back due at `retryAt`, and
   * appends `errorEvent` (the workflow's `$errors` event of a final
   * failure). Returns that append's result; null when nothing was done
   * because the send is gone or was claimed again since (its lease ran out).
   */
  settleSend(send: OutboxSend, settlement: SendSettlement, errorEvent?: EventBatch | undefined): Promise<{ settled: boolean; appended: AppendResult | null }>;
  /** Removes deliveries whose listener is gone. */
  dropDeliveries(keys: DeliveryKey[]): Promise<void>;
  /**
   * Settles deliveries only while the caller's claim still holds them: still
   * running, and claimed `attempts` times (each claim counts one more, so a
   * later claim by another process fences this one out). Removes them
   * (`retryAt` null) or puts them back due at `retryAt`. Returns the keys it
   * settled; the others belong to whoever claimed them since.
   */
  settleClaimedDeliveries(claims: Array<DeliveryKey & { attempts: number }>, retryAt: number | null): Promise<DeliveryKey[]>;

  /** Creates a workflow; Conflict when the slug is taken. */
  createWorkflow(workflow: Workflow): Promise<Workflow>;
  /** By id (`p_…`) or name slug. */
  findWorkflow(ownerId: string, idOrSlug: string): Promise<Workflow | null>;
  listWorkflows(ownerId: string, page: PageRequest): Promise<PageSlice<Workflow>>;
  /** The owner's workflow slugs equal to `base` or starting with `base-`. */
  takenWorkflowSlugs(ownerId: string, base: string): Promise<Set<string>>;
  updateWorkflow(workflow: Workflow): Promise<void>;
  /** Removes the workflow with its runs, events, pending deliveries and the subscriptions it is part of. */
  deleteWorkflow(ownerId: string, workflowId: string): Promise<boolean>;
  findErrorWorkflow(ownerId: string): Promise<Workflow | null>;
  /** Workflows whose trigger is this source. */
  workflowsTriggeredBy(ownerId: string, sourceId: string): Promise<Workflow[]>;
  listRuns(ownerId: string, workflowId: string, page: PageRequest): Promise<PageSlice<WorkflowRun>>;
  /**
   * The recorded runs of these run keys (the workflow's deliveries from
   * `emitterId` of `eventId`), whatever their status: one waiting to retry a
   * step or delayed comes with what it resumes with; one that ended says its
   * delivery's run happened already. Asked only for deliveries claimed more
   * than once.
   */
  findRunsByKey(ownerId: string, workflowId: string, keys: Array<{ emitterId: string; eventId: string }>): Promise<WorkflowRun[]>;
  /**
   * Changes the row of a run that waits in the queue (`retrying` or
   * `delayed`) while it is still at `attempt` (a later attempt has not
   * replaced it): a cancel, or a resume URL's request. False when it no
   * longer is (resumed and recorded since, or cancelled already).
   */
  updateWaitingRun(ownerId: string, runId: string, attempt: number, change: WaitingRunChange): Promise<boolean>;
  /** Makes these deliveries, waiting in the store's queue (pending, due later), due at `now`. Returns how many were. */
  hurryDeliveries(keys: DeliveryKey[], now: number): Promise<number>;
  findRun(ownerId: string, runId: string): Promise<WorkflowRun | null>;
  /** The workflow's kept versions (createWorkflow and updateWorkflow write them), newest first: at most `limit`, below `before` when given. */
  listWorkflowVersions(ownerId: string, workflowId: string, options: { limit: number; before?: number | undefined }): Promise<WorkflowVersion[]>;
  /** One kept version of the workflow, or null (never saved, or let go: see KEPT_WORKFLOW_VERSIONS). */
  findWorkflowVersion(ownerId: string, workflowId: string, version: number): Promise<WorkflowVersion | null>;
  /**
   * Deliveries of a gated workflow that end without a run (the workflow is
   * paused or gone, or they were given up): their slots are freed and the
   * next waiting events admitted, recorded pending for a claimer, as an
   * ended run's record does. Answers how many were admitted.
   */
  releaseGateSlots(workflowId: string, keys: Array<{ emitterId: string; eventId: string }>, now: number): Promise<number>;
  /**
   * Deliveries taken over after their process died (a lease ran out): the
   * one-at-a-time line chains they headed let their unrun followers wait
   * again, and the lines admit what their slots allow (all, for a line whose
   * gate was removed), recorded pending. Answers how many were admitted.
   */
  releaseChainsOf(heads: DeliveryKey[], now: number): Promise<number>;
  /** What waits at the workflow's gate (concurrency, rate limit): counts and times, in two cheap queries. */
  gateStats(ownerId: string, workflowId: string, now: number): Promise<GateStats>;
  /**
   * Takes a waiting (not yet admitted) event of a gated workflow out of its
   * line and records its run `cancelled`, in one transaction; null when the
   * owner's workflow has no such event waiting (admitted, run, or unknown).
   */
  cancelWaiting(ownerId: string, workflowId: string, eventId: string, now: number): Promise<WorkflowRun | null>;
  /**
   * The events waiting at the workflow's gate, in line order (the shared
   * line first, then each key's; arrival order within a line), one page:
   * cursors are event ids (`after`: the ones behind it, `before`: ahead of
   * it). Throws a ValidationError naming the cursor when its event has left
   * the gate since.
   */
  listWaiting(ownerId: string, workflowId: string, page: PageRequest): Promise<PageSlice<WaitingEvent>>;
  /** One stored event (a `$errors` event to replay), or null. */
  findEvent(ownerId: string, emitterId: string, eventId: string): Promise<StoredEvent | null>;

  /** Records a mail in the owner's outbox (before any delivery is tried); returns it as stored. A mail whose id is recorded already is left as it was, and returned as stored. */
  addMail(entry: OutboxEntry): Promise<OutboxEntry>;
  /** Sets a mail's delivery status; `error` and `sentAt` are cleared when not given. */
  markMail(id: string, update: { status: MailStatus; error?: string | null; sentAt?: number | null }): Promise<void>;
  /** The owner's mails, newest first, cursor-paged by id. */
  listOutbox(ownerId: string, page: PageRequest): Promise<PageSlice<OutboxEntry>>;
  /**
   * Claims the error notice of (owner, workflow, error code, UTC day `YYYY-MM-DD`):
   * true only for the first claim of that key, so a workflow's error mails go out
   * once a day per code. Race-safe: of concurrent claims, exactly one gets true.
   */
  claimDailyNotice(ownerId: string, workflowId: string, code: string, day: string): Promise<boolean>;

  createWebhook(webhook: Webhook): Promise<Webhook>;
  findWebhook(ownerId: string, webhookId: string): Promise<Webhook | null>;
  listWebhooks(ownerId: string, page: PageRequest): Promise<PageSlice<Webhook>>;
  /** Removes the webhook with the subscriptions it listens through, its pending deliveries and their records; false when the owner has none such. */
  deleteWebhook(ownerId: string, webhookId: string): Promise<boolean>;
  /**
   * In one transaction: records an attempt's outcome for (webhook, event)
   * (created at the first attempt, its id kept after), and settles the
   * delivery: removed once `status` is delivered or failed (given up), due
   * again at `retryAt` while retrying.
   */
  recordWebhookAttempt(record: WebhookDelivery, retryAt: number | null): Promise<void>;
  /** What became of the events sent to the owner's webhook, newest first, cursor-paged by id. */
  listWebhookDeliveries(ownerId: string, webhookId: string, page: PageRequest): Promise<PageSlice<WebhookDelivery>>;

  /** Creates or replaces the owner's variable of that name (its created_at kept on replace). */
  putEnvVar(envVar: EnvVar): Promise<EnvVar>;
  /** The owner's variables, by name. */
  listEnvVars(ownerId: string): Promise<EnvVar[]>;
  /** The owner's variables of these names (those that exist). */
  findEnvVars(ownerId: string, names: string[]): Promise<EnvVar[]>;
  /** False when the owner has no variable of that name. */
  deleteEnvVar(ownerId: string, name: string): Promise<boolean>;

  /** Events kept and the newest one's time, for each of the owner's emitters given that keeps any; one grouped query. */
  eventStats(ownerId: string, emitterIds: string[]): Promise<Map<string, EmitterEventStats>>;
  /** For each of the owner's workflows given that ran: its newest run's start, and its runs and failed runs started at or after `since`. */
  runStats(ownerId: string, workflowIds: string[], since: number): Promise<Map<string, WorkflowRunStats>>;
  /** The owner's runs, failed runs and sources' events per minute since `since`, and the workflows with the most failed runs. */
  activity(ownerId: string, since: number): Promise<ActivityWindow>;
  /** Apps an admin added (the shipped ones are not stored). */
  listStoredApps(): Promise<AppDefinition[]>;
  /** False when an app of that slug is stored already. */
  createApp(app: AppDefinition, createdBy: string, at: number): Promise<boolean>;
  /** Creates or replaces an app's OAuth client; the secret comes sealed. */
  putOAuthClient(client: StoredOAuthClient): Promise<void>;
  findOAuthClient(app: string): Promise<StoredOAuthClient | null>;
  listOAuthClients(): Promise<StoredOAuthClient[]>;

  createAppAccount(account: AppAccount): Promise<void>;
  /** The owner's account, or null (another user's is null too). */
  findAppAccount(ownerId: string, accountId: string): Promise<AppAccount | null>;
  /** The owner's accounts, oldest first (a user keeps a few dozen at most). */
  listAppAccounts(ownerId: string): Promise<AppAccount[]>;
  /** Replaces the account's name, fields, expiry and health; false when the owner has none such. */
  updateAppAccount(account: AppAccount): Promise<boolean>;
  deleteAppAccount(ownerId: string, accountId: string): Promise<boolean>;
  /** The account with its refresh lease, as a process waiting on another's refresh polls it; null when the owner has none such. */
  findAppAccountRefresh(ownerId: string, accountId: string): Promise<AppAccountRefresh | null>;
  /**
   * Takes the account's refresh lease for `holder` until `until`, in one
   * compare-and-set: only when nobody holds it or the holder's lapsed before
   * `now` (it died). Clears the last refresh's failure. False when another
   * holds it (or there is no such account).
   */
  takeAccountRefreshLease(ownerId: string, accountId: string, holder: string, now: number, until: number): Promise<boolean>;
  /**
   * Writes a refreshed account (fields, expiry, health) and ends `holder`'s
   * lease, in one update, only over the sealed fields `refreshedFrom` it was
   * refreshed from: false, and nothing written, when they changed meanwhile
   * (a reconnection, or a refresh by whoever took a lapsed lease over).
   */
  saveRefreshedAppAccount(account: AppAccount, refreshedFrom: string, holder: string): Promise<boolean>;
  /** Ends `holder`'s lease without new tokens; `failure`: why and when the refresh failed, for those who waited on it (null: nothing to report). */
  releaseAccountRefreshLease(ownerId: string, accountId: string, holder: string, failure: RefreshFailure | null): Promise<void>;
  createOAuthFlow(flow: OAuthFlow): Promise<void>;
  /** The flow of that state hash, left in place; null when there is none or it expired before `now`. */
  findOAuthFlow(stateHash: string, now: number): Promise<OAuthFlow | null>;
  /** Removes and returns the flow of that state hash, once; null when there is none or it expired before `now` (expired ones are removed too). */
  takeOAuthFlow(stateHash: string, now: number): Promise<OAuthFlow | null>;

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
  /**
   * Which subscriptions get deliveries: "all" (the default); "explicit" leaves
   * out glob subscriptions (`p_*`: the error workflow, for a workflow whose
   * error notifications are off); "none" (an error raised while handling an error).
   */
  deliverTo?: "all" | "explicit" | "none" | undefined;
  /** In finishRuns: the run these events come from; when that run was recorded before, they are not appended again. */
  runId?: string | undefined;
  /** Log lines of the emitter, written in the same transaction (a source's invocations: one commit for both). */
  logs?: Array<Pick<LogEntry, "stream" | "text" | "ts">> | undefined;
  /**
   * Log lines that `$logs` listeners of the emitter get: appended as events
   * of its `$logs` channel, with their deliveries, only when a subscription
   * wants them (a source's are its `logs`; a workflow's, its steps' lines).
   */
  logEvents?: Array<Pick<LogEntry, "stream" | "text" | "ts">> | undefined;
  /**
   * Deliveries this batch carries out (a source's runs of events it listens
   * to): removed in the same transaction, so a run is committed and its
   * delivery gone together, or neither.
   */
  completes?: DeliveryKey[] | undefined;
  /**
   * Timer ticks this batch runs, by due time, with the emits of each: each
   * recorded in the same transaction (timer_tick_runs). A tick recorded
   * before (its worker died after recording it, and the shared queue ran it
   * again) appends none of its emits: its due time is in `repeatedTicks`.
   */
  ticks?: Array<{ dueAtMs: number; emits: readonly PendingEmit[] }> | undefined;
  /**
   * Record the batch's deliveries as already claimed by `claimer` for
   * `leaseMs`, and answer them in `claimed`, for a caller that runs them
   * itself at once (no claim to go through). A store that does not do it
   * records them pending, as without, and answers no `claimed`.
   */
  claim?: { claimer: string | null; leaseMs: number } | undefined;
  /**
   * With `claim`: deliveries of these emits to these listeners are handed
   * over in `claimed` without a row (`unrecorded`). Their caller waits for
   * the listener's run and is answered only once that run is recorded (or
   * its delivery is, with enqueueDeliveries), so the row would be written
   * and deleted for nothing. A store that does not hand over records them.
   */
  held?: ReadonlyMap<PendingEmit, readonly string[]> | undefined;
}

/** A delivery as a claimer gets it: with the event it carries. */
export interface ClaimedDelivery extends Delivery {
  event: unknown;
  indexedAtMs: number;
  /**
   * Handed over without a row in the store (EventBatch.held): nothing
   * removes it when its run is recorded, and it must be recorded
   * (enqueueDeliveries) before anything tells its caller it was taken.
   */
  unrecorded?: true;
  /**
   * A store row claimed beside a shared queue that holds the rest (BullMQ:
   * DeliveryWorker.takeAdmitted): "held" while it runs, so that the
   * transaction recording its run removes the row, as the embedded queue's
   * are; "removed" once that transaction committed (nothing left to settle).
   */
  storeRow?: "held" | "removed";
  /**
   * Handed over before the transaction that admitted it committed
   * (FinishRunsInput.onAdmitted): that commit. Its run is recorded only
   * once it settled, and not when it failed (the admission never happened).
   */
  admission?: Promise<void>;
  /**
   * A one-at-a-time line's next waiting events, taken with this admitted one
   * by the record that admitted it (embedded store): run one after the other
   * after it, in this process, and recorded with it (FinishRunsInput.chains).
   * Each is handed over unrecorded and holds no slot: its run starts only
   * after the one before it ended.
   */
  followers?: ClaimedDelivery[];
  /** With followers: the line they wait in (its gate key). */
  lineKey?: string;
}

/** What updateWaitingRun writes over a waiting run's row (see RunControl). */
export interface WaitingRunChange {
  status?: "cancelled";
  steps?: WorkflowRun["steps"];
  continuation?: WorkflowRun["continuation"];
  nextAttemptAt?: number | null;
  finishedAt?: number;
  durationMs?: number;
  cancelledBy?: string;
}

export interface FinishRunsInput {
  runs: WorkflowRun[];
  deliveries: DeliveryKey[];
  appends: EventBatch[];
  stepStores?: StepStoreWrite[] | undefined;
  sends?: NewOutboxSend[] | undefined;
  /**
   * The runs' workflows' gates (concurrency: run-gate-work.ts): each ended
   * run frees its slot and the next waiting events are admitted, their
   * deliveries recorded in the same transaction. Those due now are recorded
   * claimed by `admitClaim` when given, and answered in `admitted`, for the
   * caller to hand over at once (as an append's); the others wait as
   * pending rows for a claim (a rate limit's later due time).
   */
  admitClaim?: { claimer: string | null; leaseMs: number } | undefined;
  /**
   * With admitClaim: takes the claimed admitted deliveries as soon as they
   * are known, before the transaction that admits them commits, when the
   * store can (PostgreSQL, a concurrency line's admission); each then
   * carries that commit as `admission`, and a run of one must not be
   * recorded until it settled. The next run of a one-at-a-time line then
   * starts while the last one's record is flushed. Answers false when it
   * does not take them: they come in `admitted`, after the commit, as
   * without it.
   */
  onAdmitted?: ((admitted: ClaimedDelivery[]) => boolean) | undefined;
  /**
   * One-at-a-time lines whose admitted event came with followers
   * (ClaimedDelivery.followers) among these runs: the followers not run wait
   * again, and the line admits what its slots allow.
   */
  chains?: LineChain[] | undefined;
  now?: number | undefined;
}

/** What finishRuns did: each append's result (in order), and the ids of the runs it recorded now. */
export interface FinishedRuns {
  /** Deliveries of waiting events the runs' ended runs admitted, recorded claimed (FinishRunsInput.admitClaim). */
  admitted?: ClaimedDelivery[];
  /** How many admitted deliveries were recorded pending (no claim given, or due later): a claimer should look. */
  admittedPending?: number;
  /** When the earliest of those falls due, when it is later than now (a rate limit's start time). */
  admittedLaterAt?: number;
  appended: AppendResult[];
  /** Runs whose key was recorded before (a delivery run twice) are not among them. */
  recorded: Set<string>;
}

export type NewDelivery = Omit<Delivery, "status" | "attempts" | "interruptions"> & { event: unknown; indexedAtMs: number };

export interface AppendResult {
  events: StoredEvent[];
  /** The emits that became `events`, in the same order (the very objects passed in). */
  accepted: PendingEmit[];
  rejected: Rejection[];
  /** Deliveries recorded for listeners: when none, there is no listener to wake. */
  deliveries: number;
  /** The batch's log lines as stored (with their ids); empty without any. */
  logs: LogEntry[];
  /** The batch's log lines as `$logs` events, when a listener wanted them (not among `events`). */
  logEvents?: StoredEvent[];
  /** The deliveries recorded claimed (EventBatch.claim), when the store did so. */
  claimed?: ClaimedDelivery[];
  /** When the earliest delivery a rate limit admitted for later falls due (epoch ms); absent when none. */
  laterAt?: number;
  /** Due times of EventBatch.ticks recorded before: their emits were not appended. */
  repeatedTicks?: number[];
}

export interface NewUser {
  id: string;
  username: string;
  email: string | null;
  isAdmin: boolean;
  createdAt: number;
}

export interface NewSession {
  id: string;
  kind: "session" | "sign_in_link";
  tokenHash: string;
  ownerId: string;
  apiKeyId: string;
  createdAt: number;
  expiresAt: number;
}

export interface StoredSession {
  id: string;
  ownerId: string;
  apiKeyId: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  keyRevoked: boolean;
}

export interface NewApiKeyFields {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  createdAt: number;
}
