/**
 * Row types of the tables, as Kysely sees them. Booleans are stored as 0/1
 * integers and times as epoch-millisecond integers, so that one definition
 * serves SQLite and PostgreSQL alike.
 */
export interface Database {
  users: UserRow;
  api_keys: ApiKeyRow;
  components: ComponentRow;
  sources: SourceRow;
  emitter_state: EmitterStateRow;
  events: EventRow;
  logs: LogRow;
  subscriptions: SubscriptionRow;
  deliveries: DeliveryRow;
  workflows: WorkflowRow;
  workflow_versions: WorkflowVersionRow;
  runs: RunRow;
  registry: RegistryRow;
  catalog_components: CatalogComponentRow;
  registry_apps: RegistryAppRow;
  outbox: OutboxRow;
  error_notices: ErrorNoticeRow;
  webhooks: WebhookRow;
  webhook_deliveries: WebhookDeliveryRow;
  step_store_entries: StepStoreEntryRow;
  data_stores: DataStoreRow;
  data_store_records: DataStoreRecordRow;
  send_outbox: SendOutboxRow;
  env_vars: EnvVarRow;
  sessions: SessionRow;
  apps: AppRow;
  oauth_clients: OAuthClientRow;
  app_accounts: AppAccountRow;
  oauth_flows: OAuthFlowRow;
  processes: ProcessRow;
  workflow_gates: WorkflowGateRow;
  run_gate: RunGateRow;
  timer_tick_runs: TimerTickRunRow;
}

/** A timer's due time whose run was recorded (0029-timer-tick-runs: a tick run again appends nothing). */
export interface TimerTickRunRow {
  source_id: string;
  due_at_ms: number;
}

/** A workflow's gate (0025-run-gate). */
export interface WorkflowGateRow {
  workflow_id: string;
  owner_id: string;
  concurrency: number | null;
  concurrency_key: string | null;
  rate_runs: number | null;
  rate_per_ms: number | null;
  rate_recent: string | null;
  next_position: number;
}

/** An event waiting in a gate's line, or admitted and holding a slot until its run is recorded. */
export interface RunGateRow {
  workflow_id: string;
  emitter_id: string;
  event_id: string;
  owner_id: string;
  gate_key: string;
  position: number;
  /** `following`: taken by the admitted event `follows`, to run right after it (migration 0028). */
  state: "waiting" | "admitted" | "following";
  follows: string | null;
  subscription_id: string;
  channel: string;
  payload: string | null;
  indexed_at_ms: number | null;
  created_at: number;
}

export interface UserRow {
  id: string;
  username: string;
  email: string | null;
  is_admin: number;
  created_at: number;
}

export interface ApiKeyRow {
  id: string;
  owner_id: string;
  name: string;
  hash: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** A console session or a one-time sign-in link (migration 0017). */
export interface SessionRow {
  id: string;
  kind: "session" | "sign_in_link";
  token_hash: string;
  owner_id: string;
  api_key_id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface ComponentRow {
  id: string;
  owner_id: string;
  name: string;
  version: string;
  key: string | null;
  kind: string;
  code: string;
  code_hash: string;
  bundle: string;
  bundle_hash: string;
  /** The bundle's source map (JSON); null for components saved before maps were kept. */
  bundle_map: string | null;
  /** JSON PackageLock; null when the component imports no packages. */
  lock: string | null;
  manifest: string;
  created_at: number;
  updated_at: number;
}

export interface SourceRow {
  id: string;
  owner_id: string;
  component_id: string;
  name: string;
  name_slug: string;
  configured_props: string;
  active: number;
  endpoint_token: string | null;
  timer: string | null;
  next_tick_at: number | null;
  retention: number;
  limits: string | null;
  db_state: string;
  created_at: number;
  updated_at: number;
}

export interface EmitterStateRow {
  emitter_id: string;
  owner_id: string;
  last_ms: number;
  last_seq: number;
  dedupe_state: string | null;
  /** Events held per channel, as JSON ({ "": 100, … }); null: count them. */
  channel_counts: string | null;
  /** Log lines held; null: count them. */
  log_count: number | string | null;
}

export interface EventRow {
  emitter_id: string;
  ms: number;
  seq: number;
  owner_id: string;
  channel: string;
  summary: string | null;
  emit_id: string | null;
  event: string;
  indexed_at_ms: number;
}

export interface LogRow {
  emitter_id: string;
  ms: number;
  seq: number;
  owner_id: string;
  stream: string;
  text: string;
}

export interface SubscriptionRow {
  id: string;
  owner_id: string;
  emitter_id: string;
  listener_id: string;
  event_name: string;
  created_at: number;
}

export interface DeliveryRow {
  listener_id: string;
  emitter_id: string;
  event_id: string;
  owner_id: string;
  subscription_id: string;
  channel: string;
  status: string;
  attempts: number;
  /** Claims of it that its claimer's death cut off (see 0010-delivery-interruptions); 0 when inserted. */
  interruptions: number;
  /** The instance id of the process that leased it last (0011-delivery-claimer). */
  claimed_by: string | null;
  available_at: number;
  created_at: number;
  /** The event's JSON, copied: retention may trim the event itself before the listener runs. */
  payload: string | null;
  indexed_at_ms: number | null;
}

export interface WorkflowRow {
  id: string;
  owner_id: string;
  name: string;
  name_slug: string;
  active: number;
  trigger_source_id: string | null;
  trigger_owned: number;
  trigger_kind: string;
  steps: string;
  respond: string;
  settings: string;
  is_error_workflow: number;
  deployment_id: string;
  created_at: number;
  updated_at: number;
  /** 0027: the number of its current version (1 for a workflow never updated). */
  version?: number;
}

/** 0027: one saved version of a workflow's steps (JSON), immutable once written (see workflow-version-queries.ts). */
export interface WorkflowVersionRow {
  workflow_id: string;
  version: number;
  owner_id: string;
  deployment_id: string;
  steps: string;
  saved_at: number;
}

export interface RunRow {
  id: string;
  owner_id: string;
  workflow_id: string;
  emitter_id: string;
  event_id: string;
  status: string;
  trigger_event: string;
  steps: string;
  error: string | null;
  exit_reason: string | null;
  replay_of: string | null;
  started_at: number;
  finished_at: number;
  duration_ms: number;
  /** 0024: executions so far; the failed attempts (JSON); a retrying run's next one; what it resumes with (JSON). */
  attempt: number;
  attempts: string | null;
  next_attempt_at: number | null;
  continuation: string | null;
  /** 0026: who cancelled a `cancelled` run. */
  cancelled_by?: string | null;
  /** 0027: the workflow version the run ran; null for runs recorded before versions were kept. */
  workflow_version?: number | null;
}

/** One published version of a component: (owner, key, version) is the primary key. */
export interface RegistryRow {
  owner_id: string;
  key: string;
  version: string;
  component_id: string;
  kind: string;
  published_at: number;
}

/** One version of a component of Runnel's catalog: (key, version) is the primary key; no owner. */
export interface CatalogComponentRow {
  key: string;
  version: string;
  kind: string;
  name: string;
  description: string | null;
  path: string;
  code: string;
  code_hash: string;
  bundle: string;
  bundle_hash: string;
  bundle_map: string | null;
  manifest: string;
  published_at: number;
}

/** One version of an app file published on its own: (owner_id, slug, version) is the primary key. */
export interface RegistryAppRow {
  owner_id: string;
  slug: string;
  version: string;
  name: string;
  description: string | null;
  code: string;
  code_hash: string;
  bundle: string;
  bundle_hash: string;
  bundle_map: string | null;
  manifest: string;
  published_at: number;
}

/** One mail: recorded before delivery, then marked sent or failed. */
export interface OutboxRow {
  id: string;
  owner_id: string;
  to_address: string | null;
  subject: string;
  text_body: string;
  html_body: string | null;
  kind: string;
  workflow_id: string | null;
  status: string;
  error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** A claimed error notice: the primary key (owner, workflow, code, UTC day) allows one a day. */
export interface ErrorNoticeRow {
  owner_id: string;
  workflow_id: string;
  code: string;
  day: string;
  created_at: number;
}

/** A webhook: a URL of the user's that subscriptions deliver to; `secret` is sealed (enc:v1:). */
export interface WebhookRow {
  id: string;
  owner_id: string;
  name: string | null;
  description: string | null;
  url: string;
  secret: string;
  active: number;
  created_at: number;
  updated_at: number;
}

/** What became of one event sent to one webhook: (webhook, emitter, event) is the primary key. */
export interface WebhookDeliveryRow {
  id: string;
  owner_id: string;
  webhook_id: string;
  emitter_id: string;
  event_id: string;
  channel: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

/** One key of a workflow step's `$.service.db`; the value is JSON text. */
export interface StepStoreEntryRow {
  owner_id: string;
  workflow_id: string;
  step_id: string;
  key: string;
  value: string;
}

/** A user's named data store (`ds_…`); the name is unique per owner. */
export interface DataStoreRow {
  id: string;
  owner_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

/** One record of a data store: its value as JSON text, its size, and when it expires (epoch ms, null: never). */
export interface DataStoreRecordRow {
  store_id: string;
  owner_id: string;
  key: string;
  value: string;
  bytes: number;
  expires_at: number | null;
  updated_at: number;
}

/** A `$.send.*` of a recorded run waiting to be carried out (0014-send-outbox). */
export interface SendOutboxRow {
  id: string;
  owner_id: string;
  workflow_id: string;
  run_id: string;
  step_index: number;
  send_index: number;
  type: string;
  /** JSON */
  payload: string;
  /** JSON: what a final failure's `$errors` event needs (SendErrorContext). */
  context: string;
  /** pending, or running while a claimer holds it (until available_at). */
  status: string;
  attempts: number;
  available_at: number;
  claimed_by: string | null;
  last_error: string | null;
  created_at: number;
}
export interface EnvVarRow {
  owner_id: string;
  name: string;
  /** Sealed (`enc:v1:…`) when secret. */
  value: string;
  secret: number;
  created_at: number;
  updated_at: number;
}

export interface AppRow {
  slug: string;
  name: string;
  /** JSON: the AppAuth. */
  auth: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface OAuthClientRow {
  app: string;
  client_id: string;
  /** Sealed (`enc:v1:…`). */
  client_secret: string;
  updated_at: number;
}

export interface AppAccountRow {
  id: string;
  owner_id: string;
  app: string;
  name: string;
  /** Sealed JSON object of the account's `$auth` fields. */
  fields: string;
  expires_at: number | null;
  health: string;
  health_message: string | null;
  created_at: number;
  updated_at: number;
  /** The refresh lease (0023): who holds it and until when; null when nobody refreshes. */
  refreshing_by: string | null;
  refreshing_until: number | null;
  /** Why and when the last leased refresh failed without marking the account; cleared when a lease is taken. */
  refresh_error: string | null;
  refresh_failed_at: number | null;
}

export interface OAuthFlowRow {
  state_hash: string;
  owner_id: string;
  app: string;
  name: string;
  account_id: string | null;
  /** Sealed PKCE verifier. */
  verifier: string;
  expires_at: number;
  created_at: number;
}

/** A server process of the installation (0022-processes). */
export interface ProcessRow {
  instance_id: string;
  role: string;
  version: string;
  host: string;
  pid: number;
  url: string | null;
  started_at: number;
  heartbeat_at: number;
  heartbeat_interval_ms: number;
  busy_runners: number;
  queued_deliveries: number;
}
