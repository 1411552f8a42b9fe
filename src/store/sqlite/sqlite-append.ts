import type SqliteDatabase from "better-sqlite3";
import type { Kysely } from "kysely";
import { deliveriesFor, emitterKeys, emitterStateOf, planAppend, type SubscriptionMatch } from "../append-plan.js";
import type { AppendResult, EventBatch } from "../store.js";

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

export function createSqliteAppender(database: SqliteDatabase.Database, kysely: Kysely<any>): SqliteAppender {
  const readState = database.prepare("SELECT last_ms, last_seq, dedupe_state FROM emitter_state WHERE emitter_id = ?");
  const insertEvent = database.prepare(
    "INSERT INTO events (emitter_id, ms, seq, owner_id, channel, summary, emit_id, event, indexed_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const trim = database.prepare(
    `DELETE FROM events WHERE emitter_id = ? AND channel = ? AND (ms, seq) < (
       SELECT ms, seq FROM events WHERE emitter_id = ? AND channel = ? ORDER BY ms DESC, seq DESC LIMIT 1 OFFSET ?)`,
  );
  const writeState = database.prepare(
    `INSERT INTO emitter_state (emitter_id, owner_id, last_ms, last_seq, dedupe_state) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (emitter_id) DO UPDATE SET last_ms = excluded.last_ms, last_seq = excluded.last_seq, dedupe_state = excluded.dedupe_state`,
  );
  const writeDb = database.prepare("UPDATE sources SET db_state = ? WHERE id = ? AND owner_id = ?");
  const matchingSubscriptions = database.prepare(
    "SELECT id, emitter_id, listener_id, event_name FROM subscriptions WHERE owner_id = ? AND emitter_id IN (?, ?)",
  );
  const insertDelivery = database.prepare(
    `INSERT INTO deliveries (listener_id, emitter_id, event_id, owner_id, subscription_id, channel, status, attempts, available_at, created_at, payload, indexed_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );

  const append = database.transaction((batch: EventBatch): AppendResult => {
    const plan = planAppend(batch, emitterStateOf(readState.get(batch.emitterId) as Parameters<typeof emitterStateOf>[0]));
    plan.events.forEach((event, index) => {
      const { ms, seq } = plan.positions[index]!;
      insertEvent.run(batch.emitterId, ms, seq, batch.ownerId, event.channel, event.summary, event.emitId, JSON.stringify(event.event ?? null), event.indexedAtMs);
    });
    for (const channel of plan.channels) trim.run(batch.emitterId, channel, batch.emitterId, channel, batch.retention - 1);
    let deliveries = 0;
    if (plan.events.length > 0) {
      const [own, glob] = emitterKeys(batch.emitterId);
      const subscriptions = matchingSubscriptions.all(batch.ownerId, own, glob ?? own) as SubscriptionMatch[];
      for (const row of deliveriesFor(batch, plan.events, subscriptions)) {
        deliveries += 1;
        insertDelivery.run(row.listener_id, row.emitter_id, row.event_id, row.owner_id, row.subscription_id, row.channel, row.status, row.attempts, row.available_at, row.created_at, row.payload, row.indexed_at_ms);
      }
    }
    const dedupe = plan.state.dedupe === null ? null : JSON.stringify(plan.state.dedupe);
    writeState.run(batch.emitterId, batch.ownerId, plan.state.lastMs, plan.state.lastSeq, dedupe);
    if (batch.sourceDb) writeDb.run(JSON.stringify(batch.sourceDb), batch.emitterId, batch.ownerId);
    return { events: plan.events, accepted: plan.accepted, rejected: plan.rejected, deliveries };
  });

  return { append: (batch) => outsideKyselyTransaction(database, kysely, () => append(batch)), appendInTransaction: (batch) => append(batch) };
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
