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
  available_at: number;
  created_at: number;
}
