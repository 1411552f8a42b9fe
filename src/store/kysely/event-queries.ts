import { sql, type Kysely, type Selectable, type Transaction } from "kysely";
import { nextEventIds, parseEventId } from "../../domain/event-ids.js";
import { deliveriesFor, emitterKeys, emitterStateOf, planAppend } from "../append-plan.js";
import type { PageRequest, PageSlice } from "../../domain/paging.js";
import { LOG_RETENTION, type LogEntry, type StoredEvent } from "../../domain/sources.js";
import type { AppendResult, EventBatch, Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { fromJson, toJson } from "./json-columns.js";
import type { Database, EventRow, LogRow } from "./schema.js";

type EventQueries = Pick<Store, "appendEvents" | "listEvents" | "findEvent" | "deleteEvents" | "appendLogs" | "listLogs">;

/** Events and logs of every emitter, and the per-emitter state behind their ids and dedupe. */
export function eventQueries({ db }: QueryContext): EventQueries {
  return {
    appendEvents(batch) {
      return db.transaction().execute((trx) => appendWithin(trx, batch));
    },

    listEvents(ownerId, emitterId, { channel, page }) {
      return readTimePage(page, async (window) => {
        let query = db.selectFrom("events").selectAll().where("emitter_id", "=", emitterId).where("owner_id", "=", ownerId);
        if (channel !== undefined && channel !== null) query = query.where("channel", "=", channel);
        if (window.cursor) query = query.where((eb) => afterCursor(eb, window.cursor!));
        const rows = await query.orderBy("ms", window.order).orderBy("seq", window.order).limit(window.limit).execute();
        return rows.map(toStoredEvent);
      }, async () => {
        let query = db.selectFrom("events").select((eb) => eb.fn.countAll<number>().as("count")).where("emitter_id", "=", emitterId).where("owner_id", "=", ownerId);
        if (channel !== undefined && channel !== null) query = query.where("channel", "=", channel);
        return Number((await query.executeTakeFirstOrThrow()).count);
      });
    },

    async findEvent(ownerId, emitterId, eventId) {
      const id = parseEventId(eventId);
      if (!id) return null;
      const row = await db
        .selectFrom("events")
        .selectAll()
        .where("emitter_id", "=", emitterId)
        .where("owner_id", "=", ownerId)
        .where("ms", "=", id.ms)
        .where("seq", "=", id.seq)
        .executeTakeFirst();
      return row ? toStoredEvent(row) : null;
    },

    async deleteEvents(ownerId, emitterId, range) {
      let query = db.deleteFrom("events").where("emitter_id", "=", emitterId).where("owner_id", "=", ownerId);
      const start = range.startId ? parseEventId(range.startId) : null;
      const end = range.endId ? parseEventId(range.endId) : null;
      if (start) query = query.where((eb) => eb.or([eb("ms", ">", start.ms), eb.and([eb("ms", "=", start.ms), eb("seq", ">=", start.seq)])]));
      if (end) query = query.where((eb) => eb.or([eb("ms", "<", end.ms), eb.and([eb("ms", "=", end.ms), eb("seq", "<=", end.seq)])]));
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    appendLogs(ownerId, emitterId, entries) {
      if (entries.length === 0) return Promise.resolve([]);
      return db.transaction().execute(async (trx) => {
        const newest = await trx
          .selectFrom("logs")
          .select(["ms", "seq"])
          .where("emitter_id", "=", emitterId)
          .orderBy("ms", "desc")
          .orderBy("seq", "desc")
          .limit(1)
          .executeTakeFirst();
        const previous = newest ? `${newest.ms}-${newest.seq}` : null;
        const ids = nextEventIds(previous, Math.max(...entries.map((entry) => entry.ts)), entries.length);
        const logs: LogEntry[] = entries.map((entry, index) => ({ ...entry, id: ids[index]!, emitterId }));
        await trx.insertInto("logs").values(logs.map((log) => toLogRow(log, ownerId))).execute();
        await trimToNewest(trx, "logs", emitterId, LOG_RETENTION, null);
        return logs;
      });
    },

    listLogs(ownerId, emitterId, page) {
      return readTimePage(page, async (window) => {
        let query = db.selectFrom("logs").selectAll().where("emitter_id", "=", emitterId).where("owner_id", "=", ownerId);
        if (window.cursor) query = query.where((eb) => afterCursor(eb, window.cursor!));
        const rows = await query.orderBy("ms", window.order).orderBy("seq", window.order).limit(window.limit).execute();
        return rows.map(toLogEntry);
      }, async () => {
        const query = db.selectFrom("logs").select((eb) => eb.fn.countAll<number>().as("count")).where("emitter_id", "=", emitterId).where("owner_id", "=", ownerId);
        return Number((await query.executeTakeFirstOrThrow()).count);
      });
    },
  };
}

interface TimeCursor {
  op: "<" | ">";
  ms: number;
  seq: number;
}

/** A newest-first page over (ms, seq), with event ids as cursors; see id-paging.ts for the same over plain ids. */
async function readTimePage<T>(
  page: PageRequest,
  read: (window: { cursor: TimeCursor | null; order: "asc" | "desc"; limit: number }) => Promise<T[]>,
  count: () => Promise<number>,
): Promise<PageSlice<T>> {
  const cursorId = page.before ?? page.after;
  const parsed = cursorId ? parseEventId(cursorId) : null;
  let items: T[];
  if (page.before && parsed) {
    items = (await read({ cursor: { op: ">", ...parsed }, order: "asc", limit: page.limit })).reverse();
  } else {
    items = await read({ cursor: page.after && parsed ? { op: "<", ...parsed } : null, order: "desc", limit: page.limit });
  }
  return { items, totalCount: await count() };
}

function afterCursor(eb: any, cursor: TimeCursor) {
  return eb.or([eb("ms", cursor.op, cursor.ms), eb.and([eb("ms", "=", cursor.ms), eb("seq", cursor.op, cursor.seq)])]);
}

/**
 * Keeps the newest `keep` rows of an emitter (one channel of it, for events),
 * in one statement: rows older than the keep-th newest go. Row values compare
 * (ms, seq) pairs in SQLite and PostgreSQL alike.
 */
async function trimToNewest(trx: Kysely<Database>, table: "events" | "logs", emitterId: string, keep: number, channel: string | null) {
  const inChannel = channel !== null && table === "events" ? sql` AND channel = ${channel}` : sql``;
  await sql`DELETE FROM ${sql.table(table)} WHERE emitter_id = ${emitterId}${inChannel} AND (ms, seq) < (
    SELECT ms, seq FROM ${sql.table(table)} WHERE emitter_id = ${emitterId}${inChannel} ORDER BY ms DESC, seq DESC LIMIT 1 OFFSET ${keep - 1}
  )`.execute(trx);
}

function toEventRow(event: StoredEvent, ownerId: string): EventRow {
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

function toStoredEvent(row: Selectable<EventRow>): StoredEvent {
  return {
    id: `${row.ms}-${row.seq}`,
    emitterId: row.emitter_id,
    channel: row.channel,
    summary: row.summary,
    emitId: row.emit_id,
    event: fromJson(row.event),
    indexedAtMs: Number(row.indexed_at_ms),
  };
}

function toLogRow(log: LogEntry, ownerId: string): LogRow {
  const { ms, seq } = parseEventId(log.id)!;
  return { emitter_id: log.emitterId, ms, seq, owner_id: ownerId, stream: log.stream, text: log.text };
}

function toLogEntry(row: Selectable<LogRow>): LogEntry {
  const stream = row.stream === "stderr" || row.stream === "system" ? row.stream : "stdout";
  return { id: `${row.ms}-${row.seq}`, emitterId: row.emitter_id, stream, text: row.text, ts: Number(row.ms) };
}

/** appendEvents' work inside a transaction the caller holds (finishing runs appends in theirs). */
export async function appendWithin(trx: Transaction<Database>, batch: EventBatch): Promise<AppendResult> {
  const row = await trx.selectFrom("emitter_state").selectAll().where("emitter_id", "=", batch.emitterId).executeTakeFirst();
  const plan = planAppend(batch, emitterStateOf(row));
  let recorded = 0;
  if (plan.events.length > 0) {
    await trx.insertInto("events").values(plan.events.map((event) => toEventRow(event, batch.ownerId))).execute();
    for (const channel of plan.channels) await trimToNewest(trx, "events", batch.emitterId, batch.retention, channel);
    const subscriptions = await trx
      .selectFrom("subscriptions")
      .select(["id", "emitter_id", "listener_id", "event_name"])
      .where("owner_id", "=", batch.ownerId)
      .where("emitter_id", "in", emitterKeys(batch.emitterId))
      .execute();
    const deliveries = deliveriesFor(batch, plan.events, subscriptions);
    if (deliveries.length > 0) await trx.insertInto("deliveries").values(deliveries).onConflict((oc) => oc.doNothing()).execute();
    recorded = deliveries.length;
  }
  const values = { last_ms: plan.state.lastMs, last_seq: plan.state.lastSeq, dedupe_state: plan.state.dedupe === null ? null : toJson(plan.state.dedupe) };
  await trx
    .insertInto("emitter_state")
    .values({ emitter_id: batch.emitterId, owner_id: batch.ownerId, ...values })
    .onConflict((oc) => oc.column("emitter_id").doUpdateSet(values))
    .execute();
  if (batch.sourceDb) {
    await trx
      .updateTable("sources")
      .set({ db_state: toJson(batch.sourceDb) })
      .where("id", "=", batch.emitterId)
      .where("owner_id", "=", batch.ownerId)
      .execute();
  }
  return { events: plan.events, accepted: plan.accepted, rejected: plan.rejected, deliveries: recorded };
}
