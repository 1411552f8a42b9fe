import { sql, SqliteAdapter, type Kysely, type Selectable, type Transaction } from "kysely";
import { nextEventIds, parseEventId } from "../../domain/event-ids.js";
import { deliveriesFor, emitterKeys, emitterStateOf, gatedListenersOf, logsWanted, planAppend } from "../append-plan.js";
import { gateDialectOf, runGateWork } from "../run-gate-drivers.js";
import { earliestDue, gateAppendRows } from "../run-gate-work.js";
import { addedPerChannel, excessOf, formatChannelCounts } from "../retention-plan.js";
import type { PageRequest, PageSlice } from "../../domain/paging.js";
import { LOG_RETENTION, type LogEntry, type StoredEvent } from "../../domain/sources.js";
import type { AppendResult, ClaimedDelivery, EventBatch, Store } from "../store.js";
import { claimedFrom, claimRows } from "../claimed-deliveries.js";
import { TICK_RUNS_KEPT_MS, withoutRepeatedTicks } from "../tick-runs.js";
import type { QueryContext } from "./context.js";
import { oldestDeletion, toEventRow } from "./event-statements.js";
import { TwoTripAppend } from "./append-in-two-trips.js";
import { fromJson, toJson } from "./json-columns.js";
import type { Database, EventRow, LogRow } from "./schema.js";

type EventQueries = Pick<Store, "appendEvents" | "listEvents" | "findEvent" | "deleteEvents" | "appendLogs" | "listLogs">;

/** Events and logs of every emitter, and the per-emitter state behind their ids and dedupe. */
export function eventQueries({ db, tripSession }: QueryContext): EventQueries {
  const twoTrips = tripSession ? new TwoTripAppend(tripSession, db) : null;
  return {
    async appendEvents(batch) {
      // PostgreSQL: in two messages where the batch allows (null: nothing written, the usual way appends it).
      const appended = twoTrips ? await twoTrips.append(batch) : null;
      if (appended) return appended;
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
      const start = range.startId ? parseEventId(range.startId) : null;
      const end = range.endId ? parseEventId(range.endId) : null;
      return db.transaction().execute(async (trx) => {
        let query = trx.deleteFrom("events").where("emitter_id", "=", emitterId).where("owner_id", "=", ownerId);
        if (start) query = query.where((eb) => eb.or([eb("ms", ">", start.ms), eb.and([eb("ms", "=", start.ms), eb("seq", ">=", start.seq)])]));
        if (end) query = query.where((eb) => eb.or([eb("ms", "<", end.ms), eb.and([eb("ms", "=", end.ms), eb("seq", "<=", end.seq)])]));
        if (range.channel !== undefined) query = query.where("channel", "=", range.channel);
        const result = await query.executeTakeFirst();
        // Held events per channel are no longer known: the next append counts them.
        await trx.updateTable("emitter_state").set({ channel_counts: null }).where("emitter_id", "=", emitterId).where("owner_id", "=", ownerId).execute();
        return Number(result.numDeletedRows);
      });
    },

    appendLogs(ownerId, emitterId, entries) {
      if (entries.length === 0) return Promise.resolve([]);
      return db.transaction().execute(async (trx) => {
        const state = await lockedState(trx, emitterId, ownerId);
        const written = await writeLogs(trx, ownerId, emitterId, entries, state.logCount);
        await trx.updateTable("emitter_state").set({ log_count: written.held }).where("emitter_id", "=", emitterId).execute();
        return written.logs;
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
 * The emitter's state row, locked for this transaction (made first when
 * missing), so that appends to one emitter from several processes take turns
 * over its ids and counts. SQLite locks the whole file on write already.
 */
async function lockedState(trx: Transaction<Database>, emitterId: string, ownerId: string) {
  if (sqliteTrx(trx)) return emitterStateOf(await trx.selectFrom("emitter_state").selectAll().where("emitter_id", "=", emitterId).executeTakeFirst());
  const locked = () => trx.selectFrom("emitter_state").selectAll().where("emitter_id", "=", emitterId).forUpdate().executeTakeFirst();
  // The row is there but for an emitter's first append: one statement, and the insert only when it is missing.
  const existing = await locked();
  if (existing) return emitterStateOf(existing);
  await trx
    .insertInto("emitter_state")
    .values({ emitter_id: emitterId, owner_id: ownerId, last_ms: 0, last_seq: -1, dedupe_state: null, channel_counts: null, log_count: null })
    .onConflict((oc) => oc.column("emitter_id").doNothing())
    .execute();
  return emitterStateOf(await locked());
}

function sqliteTrx(trx: Kysely<Database>): boolean {
  return trx.getExecutor().adapter instanceof SqliteAdapter;
}

/**
 * Deletes the oldest `excess` rows of an emitter (of one channel, for events):
 * the index read from its start as far as they go. Row values compare (ms,
 * seq) pairs in SQLite and PostgreSQL alike. Returns how many went.
 */
async function deleteOldest(trx: Kysely<Database>, table: "events" | "logs", emitterId: string, excess: number, channel: string | null): Promise<number> {
  const result = await oldestDeletion(table, emitterId, excess, channel).execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * PostgreSQL: the events inserted and the oldest `trim.excess` of their
 * channel deleted, in one statement (a round trip less per append once a
 * source holds its retention's worth, which is its steady state). The
 * DELETE sees the rows as they were before the insert (one snapshot); the
 * new ones are the newest, so the same rows go as in a statement after it,
 * unless fewer old rows were there than must go: then it deletes none, and
 * answers 0 for the caller to trim the usual way.
 */
async function insertTrimmingOldest(trx: Kysely<Database>, rows: EventRow[], emitterId: string, trim: { channel: string; excess: number }): Promise<number> {
  const result = await sql`WITH inserted AS (${trx.insertInto("events").values(rows)}) ${oldestDeletion("events", emitterId, trim.excess, trim.channel)}`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** How many rows an emitter holds (of one channel, for events): for a count not known yet. */
async function countRows(trx: Kysely<Database>, table: "events" | "logs", emitterId: string, channel: string | null): Promise<number> {
  const inChannel = channel !== null && table === "events" ? sql` AND channel = ${channel}` : sql``;
  const result = await sql<{ count: number | string }>`SELECT COUNT(*) AS count FROM ${sql.table(table)} WHERE emitter_id = ${emitterId}${inChannel}`.execute(trx);
  return Number(result.rows[0]?.count ?? 0);
}

/** Log lines after the emitter's newest, then the oldest beyond LOG_RETENTION deleted; how many it holds after. */
async function writeLogs(
  trx: Transaction<Database>,
  ownerId: string,
  emitterId: string,
  entries: Array<Pick<LogEntry, "stream" | "text" | "ts">>,
  known: number | null,
): Promise<{ logs: LogEntry[]; held: number }> {
  const newest = await trx.selectFrom("logs").select(["ms", "seq"]).where("emitter_id", "=", emitterId).orderBy("ms", "desc").orderBy("seq", "desc").limit(1).executeTakeFirst();
  const ids = nextEventIds(newest ? `${newest.ms}-${newest.seq}` : null, Math.max(...entries.map((entry) => entry.ts)), entries.length);
  const logs: LogEntry[] = entries.map((entry, index) => ({ stream: entry.stream, text: entry.text, ts: entry.ts, id: ids[index]!, emitterId }));
  await trx.insertInto("logs").values(logs.map((log) => toLogRow(log, ownerId))).execute();
  let held = known === null ? await countRows(trx, "logs", emitterId, null) : known + logs.length;
  const excess = excessOf(held, LOG_RETENTION);
  if (excess > 0) held -= await deleteOldest(trx, "logs", emitterId, excess, null);
  return { logs, held };
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
  if (!batch.ticks?.length) return appendBatch(trx, batch);
  const repeated: number[] = [];
  for (const { dueAtMs } of batch.ticks) {
    const inserted = await trx
      .insertInto("timer_tick_runs")
      .values({ source_id: batch.emitterId, due_at_ms: dueAtMs })
      .onConflict((oc) => oc.columns(["source_id", "due_at_ms"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) repeated.push(dueAtMs);
    await trx.deleteFrom("timer_tick_runs").where("source_id", "=", batch.emitterId).where("due_at_ms", "<", dueAtMs - TICK_RUNS_KEPT_MS).execute();
  }
  if (repeated.length === 0) return appendBatch(trx, batch);
  return { ...(await appendBatch(trx, withoutRepeatedTicks(batch, repeated))), repeatedTicks: repeated };
}

async function appendBatch(trx: Transaction<Database>, batch: EventBatch): Promise<AppendResult> {
  for (const key of batch.completes ?? []) {
    await trx.deleteFrom("deliveries").where("listener_id", "=", key.listenerId).where("emitter_id", "=", key.emitterId).where("event_id", "=", key.eventId).execute();
  }
  // Nothing to append (a workflow run's log lines, with no listener): no state to write either.
  if (batch.emits.length === 0 && !batch.logs?.length && !batch.sourceDb && !batch.logEvents?.length) return { events: [], accepted: [], rejected: [], deliveries: 0, logs: [] };
  const state = await lockedState(trx, batch.emitterId, batch.ownerId);
  // Read before planning: whether anyone listens to `$logs` decides whether log lines become events.
  const subscriptions =
    batch.emits.length > 0 || batch.logEvents?.length
      ? await trx
          .selectFrom("subscriptions as s")
          .leftJoin("workflow_gates as g", "g.workflow_id", "s.listener_id")
          .select(["s.id", "s.emitter_id", "s.listener_id", "s.event_name", "g.workflow_id as gated"])
          .where("s.owner_id", "=", batch.ownerId)
          .where("s.emitter_id", "in", emitterKeys(batch.emitterId))
          .execute()
      : [];
  const plan = planAppend(batch, state, logsWanted(batch, subscriptions) ? batch.logEvents : []);
  const appended = plan.logEvents.length > 0 ? [...plan.events, ...plan.logEvents] : plan.events;
  const counts = { ...state.channelCounts };
  if (appended.length > 0) {
    const rows = appended.map((event) => toEventRow(event, batch.ownerId));
    const perChannel = addedPerChannel(appended);
    // PostgreSQL, one channel with a known count (a source's usual append): its trim goes with the insert, and
    // `trimmed` is what it took from that channel (nothing when there are several).
    const [firstChannel, firstAdded] = [...perChannel][0]!;
    const firstKnown = counts[firstChannel];
    const excessNow = perChannel.size === 1 && firstKnown !== undefined && !sqliteTrx(trx) ? excessOf(firstKnown + firstAdded, batch.retention) : 0;
    let trimmed = 0;
    if (excessNow > 0) trimmed = await insertTrimmingOldest(trx, rows, batch.emitterId, { channel: firstChannel, excess: excessNow });
    else await trx.insertInto("events").values(rows).execute();
    for (const [channel, added] of perChannel) {
      const known = counts[channel];
      let held = (known === undefined ? await countRows(trx, "events", batch.emitterId, channel) : known + added) - trimmed;
      const excess = excessOf(held, batch.retention);
      if (excess > 0) held -= await deleteOldest(trx, "events", batch.emitterId, excess, channel);
      counts[channel] = held;
    }
  }
  const written = batch.logs?.length ? await writeLogs(trx, batch.ownerId, batch.emitterId, batch.logs, state.logCount) : { logs: [], held: state.logCount };
  // The emitter's state is written before the deliveries' gates are locked: a gated workflow's line stays locked for
  // as little of the transaction as can be (a one-at-a-time line's next admission waits for it, on PostgreSQL).
  const values = {
    last_ms: plan.state.lastMs,
    last_seq: plan.state.lastSeq,
    dedupe_state: plan.state.dedupe === null ? null : toJson(plan.state.dedupe),
    channel_counts: formatChannelCounts(counts),
    log_count: written.held,
  };
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
  let recorded = 0;
  let laterAt: number | undefined;
  const claimed: ClaimedDelivery[] | undefined = batch.claim ? [] : undefined;
  if (appended.length > 0) {
    const planned = deliveriesFor(batch, appended, subscriptions);
    const gated = gatedListenersOf(subscriptions);
    // Deliveries to gated workflows wait in their line, or are admitted (due now, or later under a rate limit).
    const { due, later } = gated.size > 0 ? await runGateWork(trx, gateAppendRows(planned, gated, batch.now, gateDialectOf(trx))) : { due: planned, later: [] };
    recorded = due.length + later.length;
    const { rows, unrecorded } = claimRows(batch, plan, appended, due);
    rows.push(...later);
    laterAt = earliestDue(later);
    claimed?.push(...unrecorded);
    if (rows.length > 0) {
      const query = trx.insertInto("deliveries").values(rows).onConflict((oc) => oc.doNothing());
      if (!claimed) await query.execute();
      else {
        // A delivery recorded before (ON CONFLICT DO NOTHING) is not this caller's to run: only the rows inserted are answered.
        const inserted = new Set((await query.returning(["listener_id", "event_id"]).execute()).map((row) => `${row.listener_id}/${row.event_id}`));
        const byId = new Map(appended.map((event) => [event.id, event]));
        // A row left pending (admitted by a rate limit for later) is claimed when due, like any other.
        for (const row of rows) if (row.status === "running" && inserted.has(`${row.listener_id}/${row.event_id}`)) claimed.push(claimedFrom(row, byId.get(row.event_id)));
      }
    }
  }
  return { events: plan.events, accepted: plan.accepted, rejected: plan.rejected, deliveries: recorded, logs: written.logs, ...(plan.logEvents.length > 0 ? { logEvents: plan.logEvents } : {}), ...(claimed ? { claimed } : {}), ...(laterAt !== undefined ? { laterAt } : {}) };
}
