import type SqliteDatabase from "better-sqlite3";
import type { Kysely } from "kysely";
import { formatEventId, nextEventIdParts } from "../../domain/event-ids.js";
import { LOG_RETENTION, type LogEntry } from "../../domain/sources.js";
import { deliveriesFor, emitterKeys, emitterStateOf, gatedListenersOf, logsWanted, planAppend, type SubscriptionMatch } from "../append-plan.js";
import { gateRunnerFor } from "../run-gate-drivers.js";
import { earliestDue, gateAppendRows, type DeliveryRowPlan } from "../run-gate-work.js";
import { addedPerChannel, excessOf, formatChannelCounts } from "../retention-plan.js";
import type { AppendResult, ClaimedDelivery, EventBatch } from "../store.js";
import type { StoredEvent } from "../../domain/sources.js";
import { claimedFrom, claimRows } from "../claimed-deliveries.js";
import { TICK_RUNS_KEPT_MS, withoutRepeatedTicks } from "../tick-runs.js";
import type { GroupCommit } from "./group-commit.js";
import { copyOwn } from "../../domain/own-copy.js";

/**
 * appendEvents for SQLite, written against better-sqlite3 directly. It is the
 * hottest write of the server (every HTTP request to a source ends in it), and
 * Kysely's query building costs several times what SQLite itself spends on
 * these statements. Same tables, same plan (append-plan.ts), same contract
 * tests as the Kysely version that PostgreSQL uses.
 */
export interface SqliteAppender {
  /** appendEvents itself. */
  append(batch: EventBatch): Promise<AppendResult>;
  /** The same work, synchronous, inside a transaction the caller holds (better-sqlite3 nests it as a savepoint). */
  appendInTransaction(batch: EventBatch): AppendResult;
}

export function createSqliteAppender(database: SqliteDatabase.Database, group: GroupCommit): SqliteAppender {
  const readState = database.prepare("SELECT last_ms, last_seq, dedupe_state, channel_counts, log_count FROM emitter_state WHERE emitter_id = ?");
  const insertEvent = database.prepare(
    "INSERT INTO events (emitter_id, ms, seq, owner_id, channel, summary, emit_id, event, indexed_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const countChannel = database.prepare("SELECT COUNT(*) FROM events WHERE emitter_id = ? AND channel = ?").pluck();
  // The oldest `excess` rows of a channel: the events_channel index read from its start, as far as they go.
  const trimOldest = database.prepare(
    `DELETE FROM events WHERE emitter_id = ? AND channel = ? AND (ms, seq) <= (
       SELECT ms, seq FROM events WHERE emitter_id = ? AND channel = ? ORDER BY ms, seq LIMIT 1 OFFSET ?)`,
  );
  const writeState = database.prepare(
    `INSERT INTO emitter_state (emitter_id, owner_id, last_ms, last_seq, dedupe_state, channel_counts, log_count) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (emitter_id) DO UPDATE SET last_ms = excluded.last_ms, last_seq = excluded.last_seq, dedupe_state = excluded.dedupe_state,
       channel_counts = excluded.channel_counts, log_count = excluded.log_count`,
  );
  const writeDb = database.prepare("UPDATE sources SET db_state = ? WHERE id = ? AND owner_id = ?");
  // With the gate of each listener that has one (a workflow's concurrency or rate limit), in the same read.
  const matchingSubscriptions = database.prepare(
    `SELECT s.id, s.emitter_id, s.listener_id, s.event_name, g.workflow_id AS gated FROM subscriptions s
     LEFT JOIN workflow_gates g ON g.workflow_id = s.listener_id WHERE s.owner_id = ? AND s.emitter_id IN (?, ?)`,
  );
  const runGate = gateRunnerFor(database);
  const insertDelivery = deliveryInserter(database);
  const deleteDelivery = database.prepare("DELETE FROM deliveries WHERE listener_id = ? AND emitter_id = ? AND event_id = ?");
  const logs = createSqliteLogWriter(database);

  const insertTick = database.prepare("INSERT INTO timer_tick_runs (source_id, due_at_ms) VALUES (?, ?) ON CONFLICT DO NOTHING");
  const pruneTicks = database.prepare("DELETE FROM timer_tick_runs WHERE source_id = ? AND due_at_ms < ?");
  /** Records the batch's ticks; answers the due times recorded before. */
  const recordTicks = (batch: EventBatch): number[] => {
    const repeated: number[] = [];
    for (const { dueAtMs } of batch.ticks!) {
      if (insertTick.run(batch.emitterId, dueAtMs).changes === 0) repeated.push(dueAtMs);
      pruneTicks.run(batch.emitterId, dueAtMs - TICK_RUNS_KEPT_MS);
    }
    return repeated;
  };

  const append = database.transaction((batch: EventBatch): AppendResult => {
    if (!batch.ticks?.length) return appendBatch(batch);
    const repeated = recordTicks(batch);
    if (repeated.length === 0) return appendBatch(batch);
    return Object.assign(appendBatch(withoutRepeatedTicks(batch, repeated)), { repeatedTicks: repeated });
  });

  const appendBatch = (batch: EventBatch): AppendResult => {
    for (const key of batch.completes ?? []) deleteDelivery.run(key.listenerId, key.emitterId, key.eventId);
    // Nothing to append (a workflow run's log lines, with no listener): no state to write either.
    if (batch.emits.length === 0 && !batch.logs?.length && !batch.sourceDb && !batch.logEvents?.length) return { events: [], accepted: [], rejected: [], deliveries: 0, logs: [] };
    const [own, glob] = emitterKeys(batch.emitterId);
    // Read before planning: whether anyone listens to `$logs` decides whether log lines become events.
    const subscriptions = batch.emits.length > 0 || batch.logEvents?.length ? (matchingSubscriptions.all(batch.ownerId, own, glob ?? own) as SubscriptionMatch[]) : [];
    const wantsLogs = logsWanted(batch, subscriptions);
    // Only log lines, and nobody listens to them: nothing changes (a logging workflow's runs pay no write for it).
    if (!wantsLogs && batch.emits.length === 0 && !batch.logs?.length && !batch.sourceDb) return { events: [], accepted: [], rejected: [], deliveries: 0, logs: [] };
    // Read only now: a batch that changes nothing reads no state either.
    const state = emitterStateOf(readState.get(batch.emitterId) as Parameters<typeof emitterStateOf>[0]);
    const plan = planAppend(batch, state, wantsLogs ? batch.logEvents : []);
    const appended = plan.logEvents.length > 0 ? [...plan.events, ...plan.logEvents] : plan.events;
    // Each event as JSON once: the delivery rows carry the same text.
    const payloads = new Map<StoredEvent, string>();
    appended.forEach((event, index) => {
      const { ms, seq } = plan.positions[index]!;
      const json = JSON.stringify(event.event ?? null);
      payloads.set(event, json);
      insertEvent.run(batch.emitterId, ms, seq, batch.ownerId, event.channel, event.summary, event.emitId, json, event.indexedAtMs);
    });
    // copyOwn, not a spread: once an append (see domain/own-copy.ts); channel names are the user's.
    const counts = copyOwn(state.channelCounts);
    for (const [channel, added] of addedPerChannel(appended)) {
      const known = counts[channel];
      let held = known === undefined ? (countChannel.get(batch.emitterId, channel) as number) : known + added;
      const excess = excessOf(held, batch.retention);
      if (excess > 0) held -= trimOldest.run(batch.emitterId, channel, batch.emitterId, channel, excess - 1).changes;
      counts[channel] = held;
    }
    let deliveries = 0;
    let laterAt: number | undefined;
    const claimed: ClaimedDelivery[] | undefined = batch.claim ? [] : undefined;
    if (appended.length > 0) {
      const planned = deliveriesFor(batch, appended, subscriptions, payloads);
      const gated = gatedListenersOf(subscriptions);
      // Deliveries to gated workflows wait in their line, or are admitted (due now, or later under a rate limit).
      const { due, later } = gated.size > 0 ? runGate(gateAppendRows(planned, gated, batch.now)) : { due: planned, later: [] };
      deliveries = due.length + later.length;
      const { rows, unrecorded } = claimRows(batch, plan, appended, due);
      rows.push(...later);
      laterAt = earliestDue(later);
      claimed?.push(...unrecorded);
      const appendedById = claimed && rows.length > 0 ? new Map(appended.map((event) => [event.id, event])) : undefined;
      for (const row of rows) {
        const inserted = insertDelivery(row);
        // A delivery recorded before (ON CONFLICT DO NOTHING) is not this caller's to run.
        // A row left pending (admitted by a rate limit for later) is claimed when due, like any other.
        if (inserted && claimed && row.status === "running") claimed.push(claimedFrom(row, appendedById!.get(row.event_id)));
      }
    }
    const written = batch.logs?.length ? logs.append(batch.ownerId, batch.emitterId, batch.logs, state.logCount) : { logs: [], held: state.logCount };
    const dedupe = plan.state.dedupe === null ? null : JSON.stringify(plan.state.dedupe);
    writeState.run(batch.emitterId, batch.ownerId, plan.state.lastMs, plan.state.lastSeq, dedupe, formatChannelCounts(counts), written.held);
    if (batch.sourceDb) writeDb.run(JSON.stringify(batch.sourceDb), batch.emitterId, batch.ownerId);
    return { events: plan.events, accepted: plan.accepted, rejected: plan.rejected, deliveries, logs: written.logs, ...(plan.logEvents.length > 0 ? { logEvents: plan.logEvents } : {}), ...(claimed ? { claimed } : {}), ...(laterAt !== undefined ? { laterAt } : {}) };
  };

  // Committed with the other writes of the same turn (group-commit.ts), in a savepoint of its own.
  return { append: (batch) => group.run(() => append(batch)), appendInTransaction: (batch) => append(batch) };
}

/**
 * Log lines of an emitter, inside a transaction the caller holds: ids after
 * its newest line, then the oldest beyond LOG_RETENTION deleted (by count, as
 * events are). Returns the lines as stored and how many the emitter holds.
 */
/**
 * Records a planned delivery row (an append's, or one a gate admitted when a
 * run was recorded); false when its key was recorded before (ON CONFLICT DO
 * NOTHING: not this caller's to run).
 */
export function deliveryInserter(database: SqliteDatabase.Database): (row: DeliveryRowPlan) => boolean {
  const insert = database.prepare(
    `INSERT INTO deliveries (listener_id, emitter_id, event_id, owner_id, subscription_id, channel, status, attempts, available_at, created_at, payload, indexed_at_ms, claimed_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  return (row) =>
    insert.run(row.listener_id, row.emitter_id, row.event_id, row.owner_id, row.subscription_id, row.channel, row.status, row.attempts, row.available_at, row.created_at, row.payload, row.indexed_at_ms, row.claimed_by).changes > 0;
}

export function createSqliteLogWriter(database: SqliteDatabase.Database) {
  const newest = database.prepare("SELECT ms, seq FROM logs WHERE emitter_id = ? ORDER BY ms DESC, seq DESC LIMIT 1");
  const insert = database.prepare("INSERT INTO logs (emitter_id, ms, seq, owner_id, stream, text) VALUES (?, ?, ?, ?, ?, ?)");
  const count = database.prepare("SELECT COUNT(*) FROM logs WHERE emitter_id = ?").pluck();
  const trimOldest = database.prepare(
    `DELETE FROM logs WHERE emitter_id = ? AND (ms, seq) <= (SELECT ms, seq FROM logs WHERE emitter_id = ? ORDER BY ms, seq LIMIT 1 OFFSET ?)`,
  );
  return {
    append(ownerId: string, emitterId: string, entries: Array<Pick<LogEntry, "stream" | "text" | "ts">>, known: number | null): { logs: LogEntry[]; held: number } {
      const row = newest.get(emitterId) as { ms: number; seq: number } | undefined;
      const positions = nextEventIdParts(row ? `${row.ms}-${row.seq}` : null, Math.max(...entries.map((entry) => entry.ts)), entries.length);
      const logs = entries.map((entry, index): LogEntry => {
        const { ms, seq } = positions[index]!;
        insert.run(emitterId, ms, seq, ownerId, entry.stream, entry.text);
        return { stream: entry.stream, text: entry.text, ts: entry.ts, id: formatEventId(positions[index]!), emitterId };
      });
      let held = known === null ? (count.get(emitterId) as number) : known + logs.length;
      const excess = excessOf(held, LOG_RETENTION);
      if (excess > 0) held -= trimOldest.run(emitterId, emitterId, excess - 1).changes;
      return { logs, held };
    },
  };
}

/**
 * Runs synchronous work on the connection, never inside a transaction of
 * Kysely's (which stays open across awaits): while one is open, the work
 * waits for Kysely's connection; otherwise it runs at once, since nothing
 * else can run on the thread meanwhile, without the wait's promises.
 */
export async function outsideKyselyTransaction<T>(database: SqliteDatabase.Database, kysely: Kysely<any>, work: () => T): Promise<T> {
  if (!database.inTransaction) return work();
  return kysely.connection().execute(async () => work());
}
