import type { Kysely, Migration } from "kysely";

/**
 * The gate of workflows' runs (issue 19: concurrency, order, throttling).
 * `workflow_gates`: the gate of each workflow that has one (its settings,
 * copied at save so that an append finds it with its subscriptions, the
 * start times of its latest admissions for its rate limit, and the next
 * arrival position); its row is locked by whoever admits into or out of the
 * workflow's lines (PostgreSQL: appends and recorded runs in several
 * processes take turns, one lock per workflow, so never a deadlock between
 * lines). `run_gate`: each event over
 * the gate, waiting in its line (state `waiting`, with the delivery it
 * becomes once admitted), and each admitted one until its run is recorded
 * (state `admitted`: the slot it holds).
 */
export const runGateMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("workflow_gates")
      .addColumn("workflow_id", "text", (col) => col.primaryKey())
      .addColumn("owner_id", "text", (col) => col.notNull().references("users.id").onDelete("cascade"))
      .addColumn("concurrency", "integer")
      .addColumn("concurrency_key", "text")
      .addColumn("rate_runs", "integer")
      .addColumn("rate_per_ms", "bigint")
      // JSON: the start times given to the latest admissions (at most rate_runs), ascending.
      .addColumn("rate_recent", "text")
      .addColumn("next_position", "bigint", (col) => col.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable("run_gate")
      .addColumn("workflow_id", "text", (col) => col.notNull())
      .addColumn("emitter_id", "text", (col) => col.notNull())
      .addColumn("event_id", "text", (col) => col.notNull())
      .addColumn("owner_id", "text", (col) => col.notNull())
      .addColumn("gate_key", "text", (col) => col.notNull())
      .addColumn("position", "bigint", (col) => col.notNull())
      .addColumn("state", "text", (col) => col.notNull())
      .addColumn("subscription_id", "text", (col) => col.notNull())
      .addColumn("channel", "text", (col) => col.notNull())
      .addColumn("payload", "text")
      .addColumn("indexed_at_ms", "bigint")
      .addColumn("created_at", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("run_gate_pk", ["workflow_id", "emitter_id", "event_id"])
      .execute();
    await db.schema.createIndex("run_gate_line").on("run_gate").columns(["workflow_id", "gate_key", "state", "position"]).execute();
  },
};
