import type { Kysely, Migration } from "kysely";

/**
 * The due times a timer source's runs were recorded for, when ticks come
 * from a shared queue (BullMQ's job schedulers, RUNNEL_QUEUE=redis|postgres).
 * A worker that dies after a tick's run was recorded but before the queue
 * heard so has its job taken over and run again; the row, written in the
 * transaction that appends the run's events, makes that second run append
 * nothing. Rows older than an hour before the latest tick are pruned as
 * ticks are recorded (a taken-over tick comes back one lease later).
 */
export const timerTickRunsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("timer_tick_runs")
      .addColumn("source_id", "text", (col) => col.notNull())
      .addColumn("due_at_ms", "bigint", (col) => col.notNull())
      .addPrimaryKeyConstraint("timer_tick_runs_pk", ["source_id", "due_at_ms"])
      .execute();
  },
};
