import { sql, SqliteAdapter, type Kysely, type Selectable, type Transaction } from "kysely";
import type { NewOutboxSend, OutboxSend, OutboxSendType, SendErrorContext, SendSettlement } from "../../domain/durable-sends.js";
import type { SendRecord } from "../../domain/send-records.js";
import type { StepRecord } from "../../domain/workflows.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { appendWithin } from "./event-queries.js";
import { fromJson, toJson } from "./json-columns.js";
import type { Database, SendOutboxRow } from "./schema.js";

type SendOutboxQueries = Pick<Store, "claimSends" | "requeueSends" | "settleSend">;

/**
 * The send outbox: claimed with a lease like the delivery queue, and
 * settled in one transaction with the run's send record (and, for a final
 * failure, the workflow's `$errors` event). Rows are written by finishRuns
 * (enqueueSendsWithin here, or its SQLite twin in sqlite-runs.ts).
 */
export function sendOutboxQueries({ db }: QueryContext): SendOutboxQueries {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  // PostgreSQL: claimers in several processes skip each other's rows rather than wait on them.
  const lockClause = sqlite ? sql`` : sql`FOR UPDATE SKIP LOCKED`;

  return {
    async claimSends({ now, leaseMs, limit, claimer }) {
      const result = await sql<SendOutboxRow>`
        UPDATE send_outbox SET status = 'running', attempts = attempts + 1, available_at = ${now + leaseMs}, claimed_by = ${claimer ?? null}
        WHERE id IN (
          SELECT id FROM send_outbox WHERE available_at <= ${now}
          ORDER BY available_at, created_at, id LIMIT ${limit} ${lockClause})
        RETURNING *`.execute(db);
      return result.rows.map(toOutboxSend).sort(sendOrder);
    },

    async requeueSends(now, claimer) {
      // Found leased at a start: the process that held them died, perhaps with the request in flight.
      let query = db.updateTable("send_outbox").set({ status: "pending", available_at: now, claimed_by: null }).where("status", "=", "running");
      if (claimer !== undefined) query = query.where("claimed_by", "=", claimer);
      return Number((await query.executeTakeFirst()).numUpdatedRows);
    },

    settleSend(send, settlement, errorEvent) {
      return db.transaction().execute(async (trx) => {
        // Only the attempt this claimer holds: a send claimed again since (its lease ran out) is the new claimer's to settle.
        let changed: bigint;
        if (settlement.outcome === "retry") {
          const update = trx.updateTable("send_outbox").set({ status: "pending", available_at: settlement.retryAt, claimed_by: null, last_error: settlement.error });
          changed = (await update.where("id", "=", send.id).where("status", "=", "running").where("attempts", "=", send.attempts).executeTakeFirst()).numUpdatedRows;
        } else {
          const remove = trx.deleteFrom("send_outbox");
          changed = (await remove.where("id", "=", send.id).where("status", "=", "running").where("attempts", "=", send.attempts).executeTakeFirst()).numDeletedRows;
        }
        if (Number(changed) === 0) return { settled: false, appended: null };
        await writeSendRecord(trx, send, recordOf(send, settlement), sqlite);
        const appended = errorEvent ? await appendWithin(trx, errorEvent) : null;
        return { settled: true, appended };
      });
    },
  };
}

/** Puts the sends of the runs recorded now in the outbox, inside finishRuns' transaction. */
export async function enqueueSendsWithin(trx: Kysely<Database>, sends: NewOutboxSend[], recorded: Set<string>): Promise<void> {
  const rows = sends.filter((send) => recorded.has(send.runId)).map(toSendRow);
  // One statement per row keeps far under PostgreSQL's parameter limit whatever a run sent.
  for (const row of rows) await trx.insertInto("send_outbox").values(row).onConflict((oc) => oc.column("id").doNothing()).execute();
}

export function toSendRow(send: NewOutboxSend): SendOutboxRow {
  return {
    id: send.id,
    owner_id: send.ownerId,
    workflow_id: send.workflowId,
    run_id: send.runId,
    step_index: send.step,
    send_index: send.send,
    type: send.type,
    payload: toJson(send.payload),
    context: toJson(send.context),
    status: "pending",
    attempts: 0,
    available_at: send.availableAt,
    claimed_by: null,
    last_error: null,
    created_at: send.createdAt,
  };
}

export function toOutboxSend(row: Selectable<SendOutboxRow>): OutboxSend {
  return {
    id: row.id,
    ownerId: row.owner_id,
    workflowId: row.workflow_id,
    runId: row.run_id,
    step: Number(row.step_index),
    send: Number(row.send_index),
    type: row.type as OutboxSendType,
    payload: fromJson<unknown>(row.payload),
    context: fromJson<SendErrorContext>(row.context),
    attempts: Number(row.attempts),
    availableAt: Number(row.available_at),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
  };
}

/** Oldest first; a run's sends in the order its steps made them. */
function sendOrder(a: OutboxSend, b: OutboxSend): number {
  return a.createdAt - b.createdAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0) || a.step - b.step || a.send - b.send;
}

/** What the run's record says of the send after this attempt: pending while it is retried. */
function recordOf(send: OutboxSend, settlement: SendSettlement): Pick<SendRecord, "status" | "detail"> {
  switch (settlement.outcome) {
    case "delivered":
      return { status: "delivered", detail: settlement.detail };
    case "retry":
      return { status: "pending", detail: `attempt ${send.attempts} failed: ${settlement.error}; next attempt at ${new Date(settlement.retryAt).toISOString()}` };
    case "failed":
      return { status: "failed", detail: `${settlement.error} (given up after ${send.attempts} attempt${send.attempts === 1 ? "" : "s"})` };
  }
}

/** Writes one send's status into its run's record; a run trimmed meanwhile is left alone. Locked on PostgreSQL: a run's sends may settle in two processes at once. */
async function writeSendRecord(trx: Transaction<Database>, send: OutboxSend, record: Pick<SendRecord, "status" | "detail">, sqlite: boolean): Promise<void> {
  let query = trx.selectFrom("runs").select("steps").where("id", "=", send.runId).where("owner_id", "=", send.ownerId);
  if (!sqlite) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) return;
  const steps = fromJson<StepRecord[]>(row.steps);
  const kept = steps[send.step]?.sends?.[send.send];
  if (!kept) return;
  kept.status = record.status;
  kept.detail = record.detail;
  await trx.updateTable("runs").set({ steps: toJson(steps) }).where("id", "=", send.runId).where("owner_id", "=", send.ownerId).execute();
}
