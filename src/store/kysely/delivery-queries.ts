import { WAITING_RUN_STATUSES } from "../../domain/run-flow.js";
import { sql, SqliteAdapter, type Kysely } from "kysely";
import type { DeliveryKey } from "../../domain/subscriptions.js";
import { RUN_RETENTION } from "../../domain/workflows.js";
import { deliveryOrder, noAppend, RunTrimSchedule, staleAppend } from "../run-plan.js";
import type { AppendResult, ClaimedDelivery, FinishRunsInput, Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { appendWithin } from "./event-queries.js";
import { gateDialectOf, runGateWork } from "../run-gate-drivers.js";
import { admittedLaterAt, claimAdmitted, gatedWorkflowsOf, gateFinishedRuns, mayTakeFollowers, releaseAllFollowers, takeFollowers, type AdmittedWrites, type DeliveryRowPlan, type GateRow } from "../run-gate-work.js";
import { claimedFrom, withFollowers } from "../claimed-deliveries.js";
import { toJson } from "./json-columns.js";
import type { Database, DeliveryRow } from "./schema.js";
import { toDelivery } from "./subscription-queries.js";
import { writeStepStores } from "./step-store-queries.js";
import { enqueueSendsWithin } from "./send-outbox-queries.js";
import { OneTripFinish } from "./finish-in-one-trip.js";
import { anyOfKeys, keyFilter } from "./delivery-key-filters.js";
import { runsInsert, runsInsertStatement } from "./runs-insert.js";

type DeliveryQueries = Pick<Store, "claimDeliveries" | "releaseDeliveries" | "requeueDeliveries" | "renewDeliveryLeases" | "enqueueDeliveries" | "finishRuns" | "dropDeliveries" | "settleClaimedDeliveries">;

/**
 * The durable queue of the embedded server: deliveries are leased by a
 * claimer, and removed in the transaction that records their runs. A lease
 * that expires (its process died) makes the delivery due again: at least
 * once, with runs keyed so that a second delivery records nothing twice.
 */
export function deliveryQueries({ db, oneTrip: sendInOneTrip, tripSession }: QueryContext): DeliveryQueries {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  // PostgreSQL: claimers in several processes skip each other's rows rather than wait on them.
  const lockClause = sqlite ? sql`` : sql`FOR UPDATE SKIP LOCKED`;
  const trims = new RunTrimSchedule();
  const oneTrip = sendInOneTrip ? new OneTripFinish(sendInOneTrip, tripSession) : null;

  return {
    async claimDeliveries({ now, leaseMs, limit, claimer }) {
      const result = await sql<DeliveryRow>`
        UPDATE deliveries SET status = 'running', attempts = attempts + 1, available_at = ${now + leaseMs}, claimed_by = ${claimer ?? null},
          interruptions = interruptions + CASE WHEN status = 'running' THEN 1 ELSE 0 END
        WHERE (listener_id, emitter_id, event_id) IN (
          SELECT listener_id, emitter_id, event_id FROM deliveries
          WHERE available_at <= ${now} AND status IN ('pending', 'running')
          ORDER BY created_at, event_id LIMIT ${limit} ${lockClause})
        RETURNING *`.execute(db);
      return result.rows.map(toClaimed).sort(deliveryOrder);
    },

    async releaseDeliveries(keys, availableAt) {
      await eachKey(db, keys, (trx, key) =>
        trx.updateTable("deliveries").set({ status: "pending", available_at: availableAt }).where(...keyFilter(key)).execute(),
      );
    },

    async requeueDeliveries(now, claimer) {
      // Found running at a start: the process that ran them died mid-run.
      let query = db
        .updateTable("deliveries")
        .set((eb) => ({ status: "pending", available_at: now, interruptions: eb("interruptions", "+", 1) }))
        .where("status", "=", "running");
      if (claimer !== undefined) query = query.where("claimed_by", "=", claimer);
      const result = await query.executeTakeFirst();
      // Everything stopped with the process (the embedded server): one-at-a-time lines' followers wait again.
      if (claimer === undefined) {
        await db.transaction().execute(async (trx) => {
          const admitted = await runGateWork(trx, releaseAllFollowers(now));
          if (admitted.length > 0) await trx.insertInto("deliveries").values(admitted).onConflict((oc) => oc.doNothing()).execute();
        });
      }
      return Number(result.numUpdatedRows);
    },

    async renewDeliveryLeases(claimer, until) {
      // By claimer, not claim by claim: the running rows are few (those in flight), and the rows a run's transaction
      // removed need no telling. A row taken over since is another claimer's (or, taken by this one again, fenced by
      // its attempt count at settle time).
      let query = db.updateTable("deliveries").set({ available_at: until }).where("status", "=", "running");
      query = claimer === null ? query.where("claimed_by", "is", null) : query.where("claimed_by", "=", claimer);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async enqueueDeliveries(deliveries, lease) {
      if (deliveries.length === 0) return;
      await db
        .insertInto("deliveries")
        .values(
          deliveries.map((delivery) => ({
            listener_id: delivery.listenerId,
            emitter_id: delivery.emitterId,
            event_id: delivery.eventId,
            owner_id: delivery.ownerId,
            subscription_id: delivery.subscriptionId,
            channel: delivery.channel,
            status: lease ? "running" : "pending",
            attempts: lease ? 1 : 0,
            interruptions: 0,
            claimed_by: lease?.claimer ?? null,
            available_at: lease ? lease.until : delivery.availableAt,
            created_at: delivery.createdAt,
            payload: toJson(delivery.event),
            indexed_at_ms: delivery.indexedAtMs,
          })),
        )
        .onConflict((oc) => oc.doNothing())
        .execute();
    },

    async finishRuns(input) {
      const { runs, deliveries, appends, stepStores, sends, admitClaim, now = Date.now() } = input;
      const dueTrims = trims.due(runs);
      // PostgreSQL: the runs' delivery rows go in the statement that records the runs (a round trip less per batch;
      // a one-at-a-time line pays each between two runs). SQLite has no data-modifying WITH; its own store does this.
      const removedWithRuns = !sqlite && runs.length > 0 && deliveries.length > 0 && deliveries.length <= 100;
      // PostgreSQL: the gate rows the ended runs may free slots of are locked by the statement that records the runs
      // (a round trip less between two runs of a one-at-a-time line). The gate's statements after it read the line
      // with snapshots taken once the lock is held. Not when no run row was written (a redelivery): then the gate's
      // work locks them itself.
      const gateIds = sqlite ? [] : gatedWorkflowsOf(runs);
      const recordOnly = runs.length > 0 && appends.length === 0 && !input.chains?.length && !stepStores?.length && !sends?.length && dueTrims.length === 0;
      if (oneTrip && recordOnly && (deliveries.length === 0 || removedWithRuns)) {
        const finished = await oneTrip.finish(input, now, () => runsInsertStatement(db, runs, removedWithRuns ? deliveries : [], gateIds), gateIds);
        if (finished) return finished;
      }
      return db.transaction().execute(async (trx) => {
        const recorded = new Set<string>();
        let lockedGates: Map<string, GateRow> | undefined;
        if (runs.length > 0) {
          const inserted = await runsInsert(trx, runs, removedWithRuns ? deliveries : [], gateIds).execute();
          for (const row of inserted) recorded.add(row.id);
          const first = inserted[0] as { locked_gates?: GateRow[] | null } | undefined;
          if (first && gateIds.length > 0) {
            lockedGates = new Map((first.locked_gates ?? []).map((gate) => [gate.workflow_id, gate]));
            oneTrip?.learn(gateIds, lockedGates);
          }
        }
        // Otherwise one statement per 100 rows, not one each (a round trip per run, on PostgreSQL).
        if (!removedWithRuns) {
          for (let at = 0; at < deliveries.length; at += 100) {
            const keys = deliveries.slice(at, at + 100);
            await trx.deleteFrom("deliveries").where((eb) => anyOfKeys(eb, keys)).execute();
          }
        }
        // A run recorded before (a redelivery after a crash) appends nothing again.
        const results: AppendResult[] = [];
        for (const batch of appends) results.push(staleAppend(batch, runs, recorded) ? noAppend() : await appendWithin(trx, batch));
        if (stepStores?.length) await writeStepStores(trx, stepStores, recorded);
        // Likewise its sends: they were put in the outbox with it.
        if (sends?.length) await enqueueSendsWithin(trx, sends, recorded);
        for (const workflowId of dueTrims) await trimRuns(trx, workflowId);
        // Ended runs of gated workflows free their slots: the next waiting events are admitted now, with the record.
        // On PostgreSQL a one-at-a-time line's admitted rows are written by the statement that admits them (AdmittedWrites).
        const writes: AdmittedWrites = { claim: admitClaim, written: new Map() };
        const admittedRows = await runGateWork(trx, gateFinishedRuns(runs, now, gateDialectOf(trx), writes, lockedGates, input.chains));
        if (admittedRows.length === 0) return { appended: results, recorded };
        const toWrite = admittedRows.filter((row) => !writes.written.has(row));
        claimAdmitted(toWrite, admitClaim, now);
        const inserted = toWrite.length > 0 ? await trx.insertInto("deliveries").values(toWrite).onConflict((oc) => oc.doNothing()).returning(["emitter_id", "event_id"]).execute() : [];
        const insertedKeys = new Set(inserted.map((row) => `${row.emitter_id}/${row.event_id}`));
        const tookRow = (row: DeliveryRowPlan) => writes.written.get(row) ?? insertedKeys.has(`${row.emitter_id}/${row.event_id}`);
        // Claimed (by claimAdmitted, or by the statement that wrote it) and written here: the worker in hand's to run.
        const admitted = admittedRows.filter((row) => row.status === "running" && tookRow(row)).map((row) => claimedFrom(row, undefined));
        // A one-at-a-time line's next waiting events go with the event admitted, as its followers (ClaimedDelivery.followers).
        // (Not asked of a line known to have more than one slot: a round trip for nothing.)
        for (const delivery of admitted) {
          if (!admitClaim || !mayTakeFollowers(lockedGates?.get(delivery.listenerId))) continue;
          withFollowers(delivery, await runGateWork(trx, takeFollowers(delivery)), admitClaim, now);
        }
        const laterAt = admittedLaterAt(admittedRows, now);
        return { appended: results, recorded, admitted, admittedPending: admittedRows.length - admitted.length, ...(laterAt !== undefined ? { admittedLaterAt: laterAt } : {}) };
      });
    },

    async dropDeliveries(keys) {
      await eachKey(db, keys, (trx, key) => trx.deleteFrom("deliveries").where(...keyFilter(key)).execute());
    },

    async settleClaimedDeliveries(claims, retryAt) {
      const settled: DeliveryKey[] = [];
      await eachKey(db, claims, async (trx, claim) => {
        // The claim's own attempt count is its fence: a claim since (its lease ran out) counted one more.
        const stillOurs = (eb: any) => eb.and([keyFilter(claim)[0](eb), eb("status", "=", "running"), eb("attempts", "=", claim.attempts)]);
        const changed =
          retryAt === null
            ? (await trx.deleteFrom("deliveries").where(stillOurs).executeTakeFirst()).numDeletedRows
            : (await trx.updateTable("deliveries").set({ status: "pending", available_at: retryAt }).where(stillOurs).executeTakeFirst()).numUpdatedRows;
        if (Number(changed) > 0) settled.push({ listenerId: claim.listenerId, emitterId: claim.emitterId, eventId: claim.eventId });
      });
      return settled;
    },
  };
}

async function eachKey<K extends DeliveryKey>(db: Kysely<Database>, keys: K[], action: (trx: Kysely<Database>, key: K) => Promise<unknown>): Promise<void> {
  if (keys.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const key of keys) await action(trx, key);
  });
}

async function trimRuns(trx: Kysely<Database>, workflowId: string): Promise<void> {
  const oldestKept = await trx
    .selectFrom("runs")
    .select("id")
    .where("workflow_id", "=", workflowId)
    .orderBy("id", "desc")
    .limit(1)
    .offset(RUN_RETENTION - 1)
    .executeTakeFirst();
  // A run waiting to retry is its own continuation: never trimmed while it waits.
  if (oldestKept) await trx.deleteFrom("runs").where("workflow_id", "=", workflowId).where("id", "<", oldestKept.id).where("status", "not in", [...WAITING_RUN_STATUSES]).execute();
}

export function toClaimed(row: DeliveryRow): ClaimedDelivery {
  return {
    ...toDelivery(row),
    event: row.payload === null ? null : JSON.parse(row.payload),
    indexedAtMs: Number(row.indexed_at_ms ?? row.created_at),
  };
}
