import { guardStatement, InlineRefused, isGuardFailure, literalOf, type OneTrip, type TripSession, type TripStatement } from "../postgres/one-trip.js";
import { claimedFrom } from "../claimed-deliveries.js";
import { numberedPlaceholders } from "../run-gate-drivers.js";
import { admitsInOneStatement, admittedByStatement, admittedLaterAt, ENDED_RUN_STATUSES, freeAndAdmitStatement, type AdmittedWrites, type DeliveryRowPlan, type GateRow, type PromotedRow } from "../run-gate-work.js";
import type { ClaimedDelivery, FinishedRuns, FinishRunsInput } from "../store.js";

/**
 * What a workflow's gate row asks of a run's end: nothing (no row), a slot
 * freed and the line's next admitted in one statement (a concurrency
 * without a rate limit), or the gate's stepwise work.
 */
type GateKind = "none" | "line" | "chain" | "stepwise";

/** Workflows whose gate kind is remembered at most; past it the memory starts again (each workflow's next batch relearns it). */
const REMEMBERED_MAX = 10_000;
/** The guard's marker: its error says the gate rows are not what the batch was written for. */
const GATES_CHANGED = "runnel: the gates changed since this batch was planned";

/**
 * finishRuns on PostgreSQL in one round trip (one-trip.ts), for the
 * batches whose statements need no answer from one another: runs recorded,
 * their deliveries dropped, and the slots of ended runs freed with their
 * lines' next events admitted, with no appends, sends, step stores or trim
 * among them. Such a batch is what a workflow's runs make, and what a
 * one-at-a-time line records between every two runs: four round trips
 * (begin, the runs, free-and-admit, commit) become one.
 *
 * What the gate's work is depends on the gate rows, which the batch's
 * first statement locks; so the kind of each workflow's gate is learnt
 * from the usual path (which reads the locked rows) and remembered, and
 * a guard statement after the lock checks it still holds. When a save
 * changed a gate meanwhile the guard fails the whole message (nothing of
 * it is kept) and the batch is recorded the usual way.
 */
export class OneTripFinish {
  private readonly kinds = new Map<string, GateKind>();

  constructor(
    private readonly oneTrip: OneTrip,
    private readonly session?: TripSession,
  ) {}

  /** What the usual path found under the lock: the gate rows of `workflowIds` (absent: no gate). */
  learn(workflowIds: readonly string[], locked: ReadonlyMap<string, GateRow>): void {
    if (this.kinds.size > REMEMBERED_MAX) this.kinds.clear();
    for (const id of workflowIds) this.kinds.set(id, kindOf(locked.get(id)));
  }

  /**
   * Records the batch in one round trip, or answers null when it needs the
   * usual path (its shape, a gate not known or not simple, values that
   * cannot be written inline, or gates changed since they were learnt).
   * `runsInsert` makes the runs' statement as the usual path sends it,
   * locking the gate rows of `gateIds` (made only when the batch goes).
   */
  async finish(input: FinishRunsInput, now: number, runsInsert: () => TripStatement, gateIds: readonly string[]): Promise<FinishedRuns | null> {
    const kinds = gateIds.map((id) => this.kinds.get(id));
    if (kinds.some((kind) => kind === undefined || kind === "stepwise")) return null;
    // A one-at-a-time line's record releases the followers its head did not run and takes the next ones
    // (run-gate-work.ts), each with the answer of the statement before it: the usual path's. Its records are
    // chains' then: one a chain rather than one a run.
    if (kinds.includes("chain")) return null;
    const lines = gateIds.filter((_, index) => kinds[index] === "line" || kinds[index] === "chain");
    const none = gateIds.filter((_, index) => kinds[index] === "none");
    const writes: AdmittedWrites = { claim: input.admitClaim, written: new Map() };
    // As gateFinishedRuns goes: each ended run in the batch's order, those of a line's workflow.
    const admitting = input.runs.filter((run) => ENDED_RUN_STATUSES.has(run.status) && lines.includes(run.workflowId));
    const { sql: insertSql, parameters: insertParameters } = runsInsert();
    const statements: TripStatement[] = [
      { sql: insertSql, parameters: insertParameters },
      ...(gateIds.length > 0 ? [gatesGuard(lines, none)] : []),
      ...admitting.map((run) => {
        const { sql, params } = freeAndAdmitStatement(run, now, writes);
        return { sql: numberedPlaceholders(sql), parameters: params };
      }),
    ];
    // The answers as the runs recorded and the deliveries admitted.
    const finished = (answers: Array<Array<Record<string, unknown>>>): FinishedRuns => {
      const recorded = new Set((answers[0] ?? []).map((row) => String(row.id)));
      const admittedRows: DeliveryRowPlan[] = [];
      const firstAdmission = gateIds.length > 0 ? 2 : 1;
      admitting.forEach((_, index) => admittedRows.push(...admittedByStatement((answers[firstAdmission + index] ?? []) as unknown as PromotedRow[], now, writes)));
      if (admittedRows.length === 0) return { appended: [], recorded };
      // Claimed and written by its statement: the worker in hand's to run. (A row there already is not its to run.)
      const admitted = admittedRows.filter((row) => row.status === "running" && writes.written.get(row) === true).map((row) => claimedFrom(row, undefined));
      const laterAt = admittedLaterAt(admittedRows, now);
      return { appended: [], recorded, admitted, admittedPending: admittedRows.length - admitted.length, ...(laterAt !== undefined ? { admittedLaterAt: laterAt } : {}) };
    };
    try {
      if (input.onAdmitted && input.admitClaim && this.session && admitting.length > 0) return await this.handingOverEarly(this.session, statements, finished, input.onAdmitted);
      return finished(await this.oneTrip(statements));
    } catch (error) {
      // Refused before anything was sent (a value not written inline), or sent and undone whole by the guard.
      if (error instanceof InlineRefused) return null;
      if (!isGuardFailure(error, GATES_CHANGED)) throw error;
      for (const id of gateIds) this.kinds.delete(id);
      return null;
    }
  }

  /**
   * The same statements in a transaction of two messages: the first (BEGIN
   * and the statements) answers which deliveries the line admitted, which
   * are handed over at once, and the second commits while their runs start:
   * a one-at-a-time line's next run no longer waits for the last one's
   * record to be flushed (a WAL sync each, about 1 ms under load here). Its
   * own record cannot overtake that commit: it locks the same gate row,
   * which the transaction holds until it ends.
   */
  private handingOverEarly(session: TripSession, statements: TripStatement[], finished: (answers: Array<Array<Record<string, unknown>>>) => FinishedRuns, onAdmitted: (admitted: ClaimedDelivery[]) => boolean): Promise<FinishedRuns> {
    return session(async (send) => {
      const [, ...answers] = await send([{ sql: "BEGIN", parameters: [] }, ...statements]);
      const result = finished(answers);
      const admitted = result.admitted ?? [];
      const committed = send([{ sql: "COMMIT", parameters: [] }]).then(() => undefined);
      for (const delivery of admitted) delivery.admission = committed;
      const taken = admitted.length > 0 && onAdmitted(admitted);
      if (!taken) for (const delivery of admitted) delete delivery.admission;
      await committed;
      return taken ? { ...result, admitted: [] } : result;
    });
  }
}

function kindOf(gate: GateRow | undefined): GateKind {
  if (!gate) return "none";
  if (!admitsInOneStatement(gate)) return "stepwise";
  return Number(gate.concurrency) === 1 ? "chain" : "line";
}

/**
 * Fails the message unless each of `lines` still has a concurrency without
 * a rate limit and none of `none` has a gate row. It runs after the runs'
 * statement locked the rows.
 */
function gatesGuard(lines: readonly string[], none: readonly string[]): TripStatement {
  const list = (ids: readonly string[]) => ids.map(literalOf).join(", ");
  const changed: string[] = [];
  if (lines.length > 0) changed.push(`(SELECT COUNT(*) FROM workflow_gates WHERE workflow_id IN (${list(lines)}) AND concurrency IS NOT NULL AND rate_runs IS NULL) <> ${lines.length}`);
  if (none.length > 0) changed.push(`EXISTS (SELECT 1 FROM workflow_gates WHERE workflow_id IN (${list(none)}))`);
  return guardStatement(changed.join(" OR "), GATES_CHANGED);
}
