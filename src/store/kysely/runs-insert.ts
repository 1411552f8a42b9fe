import { sql, type Kysely, type QueryCreator } from "kysely";
import { WAITING_RUN_STATUSES } from "../../domain/run-flow.js";
import type { DeliveryKey } from "../../domain/subscriptions.js";
import type { TripStatement } from "../postgres/one-trip.js";
import type { GateRow } from "../run-gate-work.js";
import type { FinishRunsInput } from "../store.js";
import { anyOfKeys } from "./delivery-key-filters.js";
import type { Database, RunRow } from "./schema.js";
import { RETRIED_RUN_COLUMNS, toRunRow } from "./workflow-queries.js";

/**
 * finishRuns' statement that records the runs, on PostgreSQL (and SQLite
 * without the WITHs): the runs' insert, which also drops `removed` (their
 * delivery rows) and locks the gate rows of `gateIds`, answered as JSON
 * beside the first run's id. A retried run's later attempt replaces a
 * waiting one; a recorded run stays as it is.
 */
export function runsInsert(db: Kysely<Database>, runs: FinishRunsInput["runs"], removed: DeliveryKey[], gateIds: string[]) {
  return runsInsertOfRows(db, runs.map(toRunRow), removed, gateIds);
}

function runsInsertOfRows(db: Kysely<Database>, rows: RunRow[], removed: DeliveryKey[], gateIds: string[]) {
  // The WITHs add tables of their own to the builder's type, which the insert does not read.
  let writer = db as unknown as QueryCreator<Database>;
  if (removed.length > 0) writer = writer.with("removed", (qc) => qc.deleteFrom("deliveries").where((eb) => anyOfKeys(eb, removed))) as unknown as QueryCreator<Database>;
  if (gateIds.length > 0) writer = writer.with("gates", (qc) => qc.selectFrom("workflow_gates").selectAll().where("workflow_id", "in", gateIds).orderBy("workflow_id").forUpdate()) as unknown as QueryCreator<Database>;
  return writer
    .insertInto("runs")
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(["workflow_id", "emitter_id", "event_id"])
        .doUpdateSet(Object.fromEntries(RETRIED_RUN_COLUMNS.map((column) => [column, sql.ref(`excluded.${column}`)])))
        .where("runs.status", "in", [...WAITING_RUN_STATUSES])
        .whereRef("runs.attempt", "<", "excluded.attempt"),
    )
    .returning(gateIds.length > 0 ? ["id", sql<GateRow[] | null>`(SELECT json_agg(g) FROM gates g)`.as("locked_gates")] : ["id"]);
}

/**
 * Texts of runsInsert by Kysely instance (its dialect and plugins make the
 * text) and shape (runs, delivery keys, gates): a few shapes in practice,
 * bounded all the same.
 */
const textsByDb = new WeakMap<Kysely<Database>, Map<string, string>>();
const SHAPES_KEPT = 64;

/**
 * runsInsert's SQL and values, as Kysely compiles them, with Kysely's
 * building and compiling paid once per shape: the text depends only on how
 * many runs, delivery keys and gates there are, and the values come in the
 * order Kysely puts them (the keys', the gates', each row's columns, the
 * waiting statuses; test/store/runs-insert.test.ts holds both equal for any
 * input). Building it took about 0.3 ms a record on a busy server, on the
 * path between every two runs of a one-at-a-time line. A row with a value
 * left out (undefined) changes the columns: compiled afresh.
 */
export function runsInsertStatement(db: Kysely<Database>, runs: FinishRunsInput["runs"], removed: DeliveryKey[], gateIds: string[]): TripStatement {
  const rows = runs.map(toRunRow);
  let textsByShape = textsByDb.get(db);
  if (!textsByShape) textsByDb.set(db, (textsByShape = new Map()));
  const shape = `${runs.length}/${removed.length}/${gateIds.length}`;
  const text = textsByShape.get(shape);
  const complete = rows.every((row) => Object.values(row).every((value) => value !== undefined));
  if (text === undefined || !complete) {
    const compiled = runsInsertOfRows(db, rows, removed, gateIds).compile();
    if (complete && textsByShape.size < SHAPES_KEPT) textsByShape.set(shape, compiled.sql);
    return { sql: compiled.sql, parameters: compiled.parameters };
  }
  const parameters: unknown[] = [];
  for (const key of removed) parameters.push(key.listenerId, key.emitterId, key.eventId);
  parameters.push(...gateIds);
  for (const row of rows) parameters.push(...Object.values(row));
  parameters.push(...WAITING_RUN_STATUSES);
  return { sql: text, parameters };
}
