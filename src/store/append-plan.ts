import { applyDedupe, type DedupeState, type Rejection, type PendingEmit } from "../domain/dedupe.js";
import { formatEventId, nextEventIdParts, parseEventId, type EventIdParts } from "../domain/event-ids.js";
import type { LogEntry, StoredEvent } from "../domain/sources.js";
import { globFor } from "../domain/subscriptions.js";
import { parseChannelCounts, readCount, type ChannelCounts } from "./retention-plan.js";
import type { EventBatch } from "./store.js";

/** Where an emitter's ids, dedupe and retention counts stand, as stored in `emitter_state`. */
export interface EmitterState {
  lastId: string | null;
  dedupe: DedupeState | null;
  /** Events held per channel, where known (see retention-plan.ts). */
  channelCounts: ChannelCounts;
  /** Log lines held, when known. */
  logCount: number | null;
}

/** What one append writes: the events, the emitter's new state, the channels to trim. */
export interface AppendPlan {
  events: StoredEvent[];
  /** The (ms, seq) of each event's id, as stored. */
  positions: EventIdParts[];
  accepted: PendingEmit[];
  rejected: Rejection[];
  /** The emitter's log lines as events of its `$logs` channel (only when a listener wants them), after `events`. */
  logEvents: StoredEvent[];
  state: { lastMs: number; lastSeq: number; dedupe: DedupeState | null };
  channels: string[];
}

/**
 * The part of appending events that is the same in every adapter: dedupe
 * against the emitter's state, then ids that follow its last one. Pure; the
 * adapter reads the state and writes the plan in one transaction.
 */
export function planAppend(batch: EventBatch, current: EmitterState, logLines: LogLine[] = []): AppendPlan {
  const deduped = applyDedupe(batch.dedupe, current.dedupe, batch.emits);
  // Log lines take ids from the same sequence as events (never deduped): a delivery's key (listener, emitter, event id) stays unique.
  const positions = nextEventIdParts(current.lastId, batch.now, deduped.accepted.length + logLines.length);
  const events: StoredEvent[] = deduped.accepted.map((emit, index) => ({
    id: formatEventId(positions[index]!),
    emitterId: batch.emitterId,
    channel: emit.name ?? "",
    summary: emit.summary ?? null,
    emitId: emit.id === undefined ? null : String(emit.id),
    event: emit.event ?? null,
    indexedAtMs: batch.now,
  }));
  const logEvents: StoredEvent[] = logLines.map((line, index) => ({
    id: formatEventId(positions[events.length + index]!),
    emitterId: batch.emitterId,
    channel: LOGS_CHANNEL,
    summary: null,
    emitId: null,
    event: logEventBody(line),
    indexedAtMs: batch.now,
  }));
  const last = positions[positions.length - 1] ?? (current.lastId ? parseEventId(current.lastId) : null);
  return {
    events,
    positions,
    logEvents,
    accepted: deduped.accepted,
    rejected: deduped.rejected,
    // last_seq is -1 while the emitter has state (dedupe) but no event yet.
    state: { lastMs: last?.ms ?? 0, lastSeq: last?.seq ?? -1, dedupe: deduped.state },
    channels: [...new Set([...events, ...logEvents].map((event) => event.channel))],
  };
}

/** A log line before it is stored. */
export type LogLine = Pick<LogEntry, "stream" | "text" | "ts">;

/** The platform's channel of an emitter's log lines. */
export const LOGS_CHANNEL = "$logs";

/** What a `$logs` listener gets for one log line (documented in docs/workflows.md). */
export function logEventBody(line: LogLine): { stream: string; msg: string; ts: number } {
  return { stream: line.stream, msg: line.text, ts: line.ts };
}

/**
 * Whether any of the subscriptions would get the batch's `$logs` events: only
 * then are log lines appended as events (a source nobody listens to pays
 * nothing for its logs but a look at its subscriptions).
 */
export function logsWanted(batch: EventBatch, subscriptions: SubscriptionMatch[]): boolean {
  if (!batch.logEvents?.length) return false;
  return subscriptions.some((subscription) => subscription.event_name === LOGS_CHANNEL && routes(batch, subscription));
}

/**
 * Whether a subscription gets the batch's events at all. Never the emitter
 * itself through a glob (the error workflow's own errors through `p_*`, a
 * source's own events through `dc_*`), nor a workflow listening to itself;
 * a source subscribed to itself by name does get its events (the hosted
 * service's scheduling components do so; the component guards its loop).
 */
function routes(batch: EventBatch, subscription: SubscriptionMatch): boolean {
  const deliverTo = batch.deliverTo ?? "all";
  if (deliverTo === "none") return false;
  if (subscription.listener_id === batch.emitterId && (subscription.emitter_id !== batch.emitterId || !batch.emitterId.startsWith("dc_"))) return false;
  if (deliverTo === "explicit" && subscription.emitter_id.endsWith("_*")) return false;
  return true;
}

/** The subscription emitter ids that cover an emitter: itself and its glob. */
export function emitterKeys(emitterId: string): string[] {
  const glob = globFor(emitterId);
  return glob ? [emitterId, glob] : [emitterId];
}

/** A subscription as the append sees it. */
export interface SubscriptionMatch {
  id: string;
  emitter_id: string;
  listener_id: string;
  event_name: string;
  /** The listener's id when it is a workflow with a gate (concurrency, rate limit: run-gate-work.ts), else null. */
  gated?: string | null;
}

/** The listeners among the subscriptions that have a gate. */
export function gatedListenersOf(subscriptions: SubscriptionMatch[]): Set<string> {
  const gated = new Set<string>();
  for (const subscription of subscriptions) if (subscription.gated) gated.add(subscription.listener_id);
  return gated;
}

/**
 * The delivery rows for the events each matching subscription wants (same
 * channel). `payloads`: the events as JSON, when the caller has them already
 * (it wrote them to the events table); the others are serialized here, once.
 */
export function deliveriesFor(batch: EventBatch, events: StoredEvent[], subscriptions: SubscriptionMatch[], payloads = new Map<StoredEvent, string>()) {
  const rows = [];
  for (const subscription of subscriptions) {
    if (!routes(batch, subscription)) continue;
    for (const event of events) {
      if (event.channel !== subscription.event_name) continue;
      let payload = payloads.get(event);
      if (payload === undefined) payloads.set(event, (payload = JSON.stringify(event.event ?? null)));
      rows.push({
        listener_id: subscription.listener_id,
        emitter_id: batch.emitterId,
        event_id: event.id,
        owner_id: batch.ownerId,
        subscription_id: subscription.id,
        channel: event.channel,
        status: "pending" as "pending" | "running",
        attempts: 0,
        interruptions: 0,
        claimed_by: null as string | null,
        available_at: batch.now,
        created_at: batch.now,
        // The event travels with its delivery: retention may trim it from the log before the listener runs.
        payload,
        indexed_at_ms: event.indexedAtMs,
      });
    }
  }
  return rows;
}

/** Reads an `emitter_state` row into the state planAppend starts from. */
export function emitterStateOf(
  row: { last_ms: number | string; last_seq: number | string; dedupe_state: string | null; channel_counts?: string | null; log_count?: number | string | null } | undefined,
): EmitterState {
  // No row: no count is known (logs could have been written without one before counts were kept).
  if (!row) return { lastId: null, dedupe: null, channelCounts: {}, logCount: null };
  const lastId = Number(row.last_seq) < 0 ? null : `${row.last_ms}-${row.last_seq}`;
  return {
    lastId,
    dedupe: row.dedupe_state === null ? null : (JSON.parse(row.dedupe_state) as DedupeState),
    channelCounts: parseChannelCounts(row.channel_counts),
    logCount: readCount(row.log_count),
  };
}
