import type { CompiledQuery, Kysely } from "kysely";
import { gateKeyOf } from "../../domain/run-gate.js";
import { deliveriesFor, emitterKeys, emitterStateOf, planAppend, type SubscriptionMatch } from "../append-plan.js";
import { claimedFrom, claimRows } from "../claimed-deliveries.js";
import { guardStatement, InlineRefused, isGuardFailure, literalOf, type OneTrip, type TripSession, type TripStatement } from "../postgres/one-trip.js";
import { addedPerChannel, excessOf, formatChannelCounts } from "../retention-plan.js";
import { numberedPlaceholders } from "../run-gate-drivers.js";
import { joinLineStatement, type DeliveryRowPlan, type JoinedRow } from "../run-gate-work.js";
import type { AppendResult, ClaimedDelivery, EventBatch } from "../store.js";
import { oldestDeletion, toEventRow } from "./event-statements.js";
import { toJson } from "./json-columns.js";
import type { Database } from "./schema.js";

/** The guard's marker: the rows are not what the second message was written for (a gate saved, a count off). */
const PLAN_STALE = "runnel: the append's plan no longer holds";

/** A subscription as the first message reads it: with its workflow's gate, when it has one. */
type GatedSubscription = SubscriptionMatch & { concurrency: number | null; concurrency_key: string | null; rate_runs: number | null };

/**
 * appendEvents on PostgreSQL in two round trips where the usual path takes
 * eight (begin, the emitter's lock, the subscriptions, the events, the
 * emitter's state, a gate's lock, the line's join, commit). The first
 * message opens the transaction, locks the emitter's row and reads the
 * subscriptions; the ids, dedupe, retention and deliveries are planned from
 * them as the usual path plans them (append-plan.ts); the second message
 * writes it all and commits. A line's join (a one-at-a-time workflow's)
 * goes in the second message too, with the gate rows locked by the
 * statement before it: the gate is held for the time PostgreSQL takes to
 * run the rest of the message, not for round trips, so the line's next
 * admission (finishRuns) waits on it far less. Each append costs the server
 * a sixth of the statements' work, which matters most where requests come
 * one at a time (a line's callers).
 *
 * Taken for the batches a source's or trigger's invocation makes: events,
 * maybe the source's store, no log lines, nothing to complete. The usual
 * path takes the others, and any batch this one gives up on before
 * committing (rolled back whole): an emitter's first append (no state row),
 * a channel whose count is not known, a gate with a rate limit, a value not
 * written inline, or rows that changed between the two messages (a guard
 * statement fails the message).
 */
export class TwoTripAppend {
  constructor(
    private readonly session: TripSession,
    private readonly db: Kysely<Database>,
  ) {}

  /** Appends the batch, or answers null (nothing written) for the usual path to do it. */
  async append(batch: EventBatch): Promise<AppendResult | null> {
    if (!takes(batch)) return null;
    return this.session(async (send) => {
      const [, stateRows, subscriptionRows] = await send([{ sql: "BEGIN", parameters: [] }, this.lockState(batch), this.subscriptions(batch)]);
      const stateRow = stateRows?.[0];
      const subscriptions = (subscriptionRows ?? []) as unknown as GatedSubscription[];
      const written = stateRow ? this.plan(batch, stateRow as Parameters<typeof emitterStateOf>[0], subscriptions) : null;
      if (!written) return giveUp(send);
      let answers: Array<Array<Record<string, unknown>>>;
      try {
        answers = await send([...written.statements, { sql: "COMMIT", parameters: [] }]);
      } catch (error) {
        if (!isGuardFailure(error, PLAN_STALE)) throw error;
        return giveUp(send);
      }
      return written.result(answers);
    }).catch((error: unknown) => {
      // Refused while writing the second message (a value not written inline): rolled back, nothing sent.
      if (error instanceof InlineRefused) return null;
      throw error;
    });
  }

  private lockState(batch: EventBatch): TripStatement {
    return compiled(this.db.selectFrom("emitter_state").selectAll().where("emitter_id", "=", batch.emitterId).forUpdate().compile());
  }

  /** The append's subscription query, with each gated workflow's gate (read unlocked: the second message guards it). */
  private subscriptions(batch: EventBatch): TripStatement {
    return compiled(
      this.db
        .selectFrom("subscriptions as s")
        .leftJoin("workflow_gates as g", "g.workflow_id", "s.listener_id")
        .select(["s.id", "s.emitter_id", "s.listener_id", "s.event_name", "g.workflow_id as gated", "g.concurrency", "g.concurrency_key", "g.rate_runs"])
        .where("s.owner_id", "=", batch.ownerId)
        .where("s.emitter_id", "in", emitterKeys(batch.emitterId))
        .compile(),
    );
  }

  /**
   * The second message's statements and how to read its answers, planned
   * as appendWithin plans them; null when this path cannot write it.
   */
  private plan(batch: EventBatch, stateRow: Parameters<typeof emitterStateOf>[0], subscriptions: GatedSubscription[]) {
    const state = emitterStateOf(stateRow);
    const plan = planAppend(batch, state, []);
    const appended = plan.events;
    const statements: TripStatement[] = [];
    const counts = { ...state.channelCounts };
    if (appended.length > 0) {
      statements.push(compiled(this.db.insertInto("events").values(appended.map((event) => toEventRow(event, batch.ownerId))).compile()));
      for (const [channel, added] of addedPerChannel(appended)) {
        const known = counts[channel];
        // Counted by the usual path, once (rows from before counts were kept, or after a deletion by hand).
        if (known === undefined) return null;
        const excess = excessOf(known + added, batch.retention);
        counts[channel] = known + added - excess;
        // The count is the emitter's own, kept under its lock: the oldest `excess` rows go. Should fewer go (a count
        // gone wrong), the guard undoes the message and the usual path deletes what is there.
        if (excess > 0) statements.push(trimmedExactly(oldestDeletion("events", batch.emitterId, excess, channel).compile(this.db), excess));
      }
    }
    statements.push(
      compiled(
        this.db
          .updateTable("emitter_state")
          .set({
            last_ms: plan.state.lastMs,
            last_seq: plan.state.lastSeq,
            dedupe_state: plan.state.dedupe === null ? null : toJson(plan.state.dedupe),
            channel_counts: formatChannelCounts(counts),
          })
          .where("emitter_id", "=", batch.emitterId)
          .compile(),
      ),
    );
    if (batch.sourceDb) {
      statements.push(compiled(this.db.updateTable("sources").set({ db_state: toJson(batch.sourceDb) }).where("id", "=", batch.emitterId).where("owner_id", "=", batch.ownerId).compile()));
    }
    const planned = deliveriesFor(batch, appended, subscriptions);
    const gateOf = new Map(subscriptions.filter((subscription) => subscription.gated).map((subscription) => [subscription.listener_id, subscription]));
    const ungated = planned.filter((row) => !gateOf.has(row.listener_id));
    const gated = planned.filter((row) => gateOf.has(row.listener_id));
    const gates = new Map(gated.map((row) => [row.listener_id, gateOf.get(row.listener_id)!]));
    // A rate limit's admissions are computed one at a time (run-gate-work.ts): the usual path's.
    for (const gate of gates.values()) if (gate.concurrency === null || gate.rate_runs !== null) return null;
    const { rows, unrecorded } = claimRows(batch, plan, appended, ungated);
    const claimed: ClaimedDelivery[] | undefined = batch.claim ? [...unrecorded] : undefined;
    const insertAt = statements.length;
    if (rows.length > 0) {
      const insert = this.db.insertInto("deliveries").values(rows).onConflict((oc) => oc.doNothing());
      statements.push(compiled(claimed ? insert.returning(["listener_id", "event_id"]).compile() : insert.compile()));
    }
    // Each gated row joins its line (gate rows locked first, in id order, and what they were read as guarded); when
    // admitted, its row is written by its join as the caller would write it (claimed with a claim, or handed over
    // without a row when held).
    const joinAt = statements.length + (gated.length > 0 ? 2 : 0);
    const joins: Array<{ row: DeliveryRowPlan; written: DeliveryRowPlan | null; held: ClaimedDelivery | null }> = [];
    if (gated.length > 0) {
      const ids = [...gates.keys()].sort();
      statements.push({ sql: `SELECT workflow_id FROM workflow_gates WHERE workflow_id IN (${ids.map(literalOf).join(", ")}) ORDER BY workflow_id FOR UPDATE`, parameters: [] });
      statements.push(gatesUnchanged([...gates.values()]));
      for (const row of gated) {
        const gate = gates.get(row.listener_id)!;
        // The event is parsed only when the gate has a key to read from it.
        const key = gateKeyOf(gate.concurrency_key, row.payload === null || gate.concurrency_key === null ? null : JSON.parse(row.payload));
        const asAdmitted = claimRows(batch, plan, appended, [{ ...row }]);
        const written = asAdmitted.rows[0] ?? null;
        joins.push({ row, written, held: asAdmitted.unrecorded[0] ?? null });
        const { sql, params } = joinLineStatement(row.listener_id, key, row, written);
        statements.push({ sql: numberedPlaceholders(sql), parameters: params });
      }
    }
    return {
      statements,
      result: (answers: Array<Array<Record<string, unknown>>>): AppendResult => {
        let deliveries = ungated.length;
        const byId = new Map(appended.map((event) => [event.id, event]));
        if (claimed && rows.length > 0) {
          // A delivery recorded before (ON CONFLICT DO NOTHING) is not this caller's to run: only the rows inserted are answered.
          const inserted = new Set((answers[insertAt] ?? []).map((row) => `${String(row.listener_id)}/${String(row.event_id)}`));
          for (const row of rows) if (inserted.has(`${row.listener_id}/${row.event_id}`)) claimed.push(claimedFrom(row, byId.get(row.event_id)));
        }
        joins.forEach((join, index) => {
          const [joined] = (answers[joinAt + index] ?? []) as unknown as JoinedRow[];
          if (joined?.state !== "admitted") return;
          deliveries += 1;
          if (!claimed) return;
          if (join.held) claimed.push(join.held);
          else if (join.written && joined.inserted === true) claimed.push(claimedFrom(join.written, byId.get(join.row.event_id)));
        });
        return { events: plan.events, accepted: plan.accepted, rejected: plan.rejected, deliveries, logs: [], ...(claimed ? { claimed } : {}) };
      },
    };
  }
}

/** Whether the batch is one this path takes (decided before anything is sent). */
function takes(batch: EventBatch): boolean {
  return batch.emits.length > 0 && !batch.logs?.length && !batch.logEvents?.length && !batch.completes?.length && !batch.ticks?.length && batch.runId === undefined;
}

/** Ends the transaction the first message opened, for the usual path to append the batch. */
async function giveUp(send: OneTrip): Promise<null> {
  await send([{ sql: "ROLLBACK", parameters: [] }]);
  return null;
}

function compiled(query: CompiledQuery): TripStatement {
  return { sql: query.sql, parameters: query.parameters };
}

/** The trim, failing the message unless it deleted exactly `excess` rows. */
function trimmedExactly(trim: CompiledQuery, excess: number): TripStatement {
  const guard = guardStatement(`(SELECT COUNT(*) FROM gone) <> ${excess}`, PLAN_STALE);
  return { sql: `WITH gone AS (${trim.sql} RETURNING 1) ${guard.sql}`, parameters: trim.parameters };
}

/** Fails the message unless each gate is still the line it was read as: a concurrency, no rate limit, the same key. */
function gatesUnchanged(gates: GatedSubscription[]): TripStatement {
  const same = gates.map(
    (gate) =>
      `EXISTS (SELECT 1 FROM workflow_gates WHERE workflow_id = ${literalOf(gate.listener_id)} AND concurrency IS NOT NULL AND rate_runs IS NULL AND concurrency_key IS NOT DISTINCT FROM ${gate.concurrency_key === null ? "NULL" : literalOf(gate.concurrency_key)})`,
  );
  return guardStatement(`NOT (${same.join(" AND ")})`, PLAN_STALE);
}
