import { WAITING_RUN_STATUSES } from "../../domain/run-flow.js";
import type SqliteDatabase from "better-sqlite3";
import type { StepStoreWrite } from "../../domain/data-stores.js";
import { RUN_RETENTION } from "../../domain/workflows.js";
import { RETRIED_RUN_COLUMNS, toRunRow } from "../kysely/workflow-queries.js";
import { toSendRow } from "../kysely/send-outbox-queries.js";
import type { DeliveryRow } from "../kysely/schema.js";
import { toClaimed } from "../kysely/delivery-queries.js";
import { deliveryOrder, noAppend, RunTrimSchedule, staleAppend } from "../run-plan.js";
import type { GroupCommit } from "./group-commit.js";
import { deliveryInserter } from "./sqlite-append.js";
import { gateRunnerFor } from "../run-gate-drivers.js";
import { admittedLaterAt, claimAdmitted, gateFinishedRuns, takeFollowers } from "../run-gate-work.js";
import { claimedFrom, withFollowers } from "../claimed-deliveries.js";
import type { AppendResult, ClaimedDelivery, EventBatch, FinishedRuns, Store } from "../store.js";

/** Runs waiting with their row as their continuation (retrying, delayed), as an SQL list. */
const WAITING_IN_SQL = WAITING_RUN_STATUSES.map((status) => `'${status}'`).join(", ");

/** What a later attempt of a run replaces in its `retrying` row (its id, key, trigger and start stay). */
const RETRIED_RUN_UPDATE = RETRIED_RUN_COLUMNS.map((column) => `${column} = excluded.${column}`).join(", ");

/**
 * Claiming deliveries and recording runs for SQLite, against better-sqlite3
 * directly: with appendEvents, the writes every workflow run makes (see
 * sqlite-append.ts for why Kysely is bypassed here). Same tables and
 * contract tests as the Kysely versions PostgreSQL uses.
 */
export function createSqliteRuns(
  database: SqliteDatabase.Database,
  group: GroupCommit,
  appendInTransaction: (batch: EventBatch) => AppendResult,
): Pick<Store, "claimDeliveries" | "finishRuns"> {
  // The limit cast: a JS number is bound as a REAL, with which SQLite reads an ordered, limited select several times
  // slower (run-gate-work.ts's line read: 25 us against 7).
  const claim = database.prepare(
    `UPDATE deliveries SET status = 'running', attempts = attempts + 1, available_at = ?, claimed_by = ?,
       interruptions = interruptions + CASE WHEN status = 'running' THEN 1 ELSE 0 END
     WHERE (listener_id, emitter_id, event_id) IN (
       SELECT listener_id, emitter_id, event_id FROM deliveries
       WHERE available_at <= ? AND status IN ('pending', 'running')
       ORDER BY created_at, event_id LIMIT CAST(? AS INTEGER))
     RETURNING *`,
  );
  const insertRun = database.prepare(
    `INSERT INTO runs (id, owner_id, workflow_id, emitter_id, event_id, status, trigger_event, steps, error, exit_reason, replay_of, started_at, finished_at, duration_ms, attempt, attempts, next_attempt_at, continuation, workflow_version)
     VALUES (@id, @owner_id, @workflow_id, @emitter_id, @event_id, @status, @trigger_event, @steps, @error, @exit_reason, @replay_of, @started_at, @finished_at, @duration_ms, @attempt, @attempts, @next_attempt_at, @continuation, @workflow_version)
     ON CONFLICT (workflow_id, emitter_id, event_id) DO UPDATE SET ${RETRIED_RUN_UPDATE}
     WHERE runs.status IN (${WAITING_IN_SQL}) AND runs.attempt < excluded.attempt`,
  );
  const deleteDelivery = database.prepare("DELETE FROM deliveries WHERE listener_id = ? AND emitter_id = ? AND event_id = ?");
  const insertDelivery = deliveryInserter(database);
  const runGate = gateRunnerFor(database);
  const insertSend = database.prepare(
    `INSERT INTO send_outbox (id, owner_id, workflow_id, run_id, step_index, send_index, type, payload, context, status, attempts, available_at, claimed_by, last_error, created_at)
     VALUES (@id, @owner_id, @workflow_id, @run_id, @step_index, @send_index, @type, @payload, @context, @status, @attempts, @available_at, @claimed_by, @last_error, @created_at)
     ON CONFLICT (id) DO NOTHING`,
  );
  const oldestKept = database.prepare("SELECT id FROM runs WHERE workflow_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?").pluck();
  // A run waiting to retry is its own continuation: never trimmed while it waits.
  const trim = database.prepare(`DELETE FROM runs WHERE workflow_id = ? AND id < ? AND status NOT IN (${WAITING_IN_SQL})`);
  const trims = new RunTrimSchedule();
  const workflowExists = database.prepare("SELECT 1 FROM workflows WHERE id = ? AND owner_id = ?").pluck();
  const upsertStepKey = database.prepare(
    `INSERT INTO step_store_entries (owner_id, workflow_id, step_id, key, value) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (workflow_id, step_id, key) DO UPDATE SET value = excluded.value`,
  );
  const deleteStepKey = database.prepare("DELETE FROM step_store_entries WHERE owner_id = ? AND workflow_id = ? AND step_id = ? AND key = ?");

  /** As writeStepStores (step-store-queries.ts) does for PostgreSQL: key by key, for the runs recorded now, of workflows that still exist. */
  const writeStepStores = (writes: StepStoreWrite[], recorded: Set<string>): void => {
    for (const write of writes) {
      if (!recorded.has(write.runId) || workflowExists.get(write.workflowId, write.ownerId) === undefined) continue;
      for (const [key, value] of Object.entries(write.set)) upsertStepKey.run(write.ownerId, write.workflowId, write.stepId, key, JSON.stringify(value));
      for (const key of write.removed) deleteStepKey.run(write.ownerId, write.workflowId, write.stepId, key);
    }
  };

  const finish = database.transaction((input: Parameters<Store["finishRuns"]>[0]): FinishedRuns => {
    const recorded = new Set<string>();
    for (const run of input.runs) if (insertRun.run(toRunRow(run)).changes > 0) recorded.add(run.id);
    for (const key of input.deliveries) deleteDelivery.run(key.listenerId, key.emitterId, key.eventId);
    // A run recorded before (a redelivery after a crash) appends nothing again.
    const results = input.appends.map((batch) => (staleAppend(batch, input.runs, recorded) ? noAppend() : appendInTransaction(batch)));
    if (input.stepStores?.length) writeStepStores(input.stepStores, recorded);
    // Likewise its sends: they were put in the outbox with it.
    for (const send of input.sends ?? []) if (recorded.has(send.runId)) insertSend.run(toSendRow(send));
    for (const workflowId of trims.due(input.runs)) {
      const oldest = oldestKept.get(workflowId, RUN_RETENTION - 1) as string | undefined;
      if (oldest) trim.run(workflowId, oldest);
    }
    // Ended runs of gated workflows free their slots: the next waiting events are admitted now, with the record.
    const now = input.now ?? Date.now();
    const admittedRows = runGate(gateFinishedRuns(input.runs, now, "sqlite", undefined, undefined, input.chains));
    if (admittedRows.length === 0) return { appended: results, recorded };
    const claimedRows = new Set(claimAdmitted(admittedRows, input.admitClaim, now));
    const admitted: ClaimedDelivery[] = [];
    for (const row of admittedRows) {
      const inserted = insertDelivery(row);
      if (inserted && claimedRows.has(row)) admitted.push(claimedFrom(row, undefined));
    }
    // A one-at-a-time line's next waiting events go with the event admitted, as its followers (ClaimedDelivery.followers).
    if (input.admitClaim) for (const delivery of admitted) withFollowers(delivery, runGate(takeFollowers(delivery)), input.admitClaim, now);
    const laterAt = admittedLaterAt(admittedRows, now);
    return { appended: results, recorded, admitted, admittedPending: admittedRows.length - admitted.length, ...(laterAt !== undefined ? { admittedLaterAt: laterAt } : {}) };
  });

  // In a savepoint of its own: a claim whose rows cannot be read back is undone, not left leased to nobody.
  const claimNow = database.transaction((leaseUntil: number, claimer: string | null, now: number, limit: number): ClaimedDelivery[] =>
    (claim.all(leaseUntil, claimer, now, limit) as DeliveryRow[]).map(toClaimed).sort(deliveryOrder),
  );

  return {
    // A write like the others: committed with the same turn's appends and records, and never asleep on the write lock (group-commit.ts).
    claimDeliveries: ({ now, leaseMs, limit, claimer }) => group.run(() => claimNow(now + leaseMs, claimer ?? null, now, limit)),
    // Committed with the other writes of the same turn, as appends are (group-commit.ts).
    finishRuns: (input) => group.run(() => finish(input)),
  };
}

