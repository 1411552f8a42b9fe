import { applyDedupe, type DedupeState, type Rejection, type PendingEmit } from "../domain/dedupe.js";
import { formatEventId, nextEventIdParts, parseEventId, type EventIdParts } from "../domain/event-ids.js";
import type { StoredEvent } from "../domain/sources.js";
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
  state: { lastMs: number; lastSeq: number; dedupe: DedupeState | null };
  channels: string[];
}

/**
 * The part of appending events that is the same in every adapter: dedupe
 * against the emitter's state, then ids that follow its last one. Pure; the
 * adapter reads the state and writes the plan in one transaction.
 */
export function planAppend(batch: EventBatch, current: EmitterState): AppendPlan {
  const deduped = applyDedupe(batch.dedupe, current.dedupe, batch.emits);
  const positions = nextEventIdParts(current.lastId, batch.now, deduped.accepted.length);
  const events: StoredEvent[] = deduped.accepted.map((emit, index) => ({
    id: formatEventId(positions[index]!),
    emitterId: batch.emitterId,
    channel: emit.name ?? "",
    summary: emit.summary ?? null,
    emitId: emit.id === undefined ? null : String(emit.id),
    event: emit.event ?? null,
    indexedAtMs: batch.now,
  }));
  const last = positions[positions.length - 1] ?? (current.lastId ? parseEventId(current.lastId) : null);
  return {
    events,
    positions,
    accepted: deduped.accepted,
    rejected: deduped.rejected,
    // last_seq is -1 while the emitter has state (dedupe) but no event yet.
    state: { lastMs: last?.ms ?? 0, lastSeq: last?.seq ?? -1, dedupe: deduped.state },
    channels: [...new Set(events.map((event) => event.channel))],
  };
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
}

/** The delivery rows for the events each matching subscription wants (same channel). */
export function deliveriesFor(batch: EventBatch, events: StoredEvent[], subscriptions: SubscriptionMatch[]) {
  const rows = [];
  const deliverTo = batch.deliverTo ?? "all";
  if (deliverTo === "none") return [];
  const payloads = new Map<StoredEvent, string>();
  for (const subscription of subscriptions) {
    // A workflow never listens to itself (the error workflow's own errors through `p_*`).
    if (subscription.listener_id === batch.emitterId) continue;
    if (deliverTo === "explicit" && subscription.emitter_id.endsWith("_*")) continue;
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
