import { sql } from "kysely";
import { parseEventId } from "../../domain/event-ids.js";
import type { StoredEvent } from "../../domain/sources.js";
import { toJson } from "./json-columns.js";
import type { EventRow } from "./schema.js";

/** Statements and rows of the events table that both ways of appending (event-queries.ts, append-in-two-trips.ts) write. */

/** Deletes the oldest `excess` rows of an emitter (of one channel, for events): the index read from its start as far as they go. */
export function oldestDeletion(table: "events" | "logs", emitterId: string, excess: number, channel: string | null) {
  const inChannel = channel !== null && table === "events" ? sql` AND channel = ${channel}` : sql``;
  return sql`DELETE FROM ${sql.table(table)} WHERE emitter_id = ${emitterId}${inChannel} AND (ms, seq) <= (
    SELECT ms, seq FROM ${sql.table(table)} WHERE emitter_id = ${emitterId}${inChannel} ORDER BY ms, seq LIMIT 1 OFFSET ${excess - 1}
  )`;
}

export function toEventRow(event: StoredEvent, ownerId: string): EventRow {
  const { ms, seq } = parseEventId(event.id)!;
  return {
    emitter_id: event.emitterId,
    ms,
    seq,
    owner_id: ownerId,
    channel: event.channel,
    summary: event.summary,
    emit_id: event.emitId,
    event: toJson(event.event),
    indexed_at_ms: event.indexedAtMs,
  };
}
