import type { Kysely, Migration } from "kysely";

/**
 * A one-at-a-time line's followers (issue 19, the FIFO line's speed). When a
 * run of a `settings.concurrency: 1` line is recorded on the embedded store,
 * the event it admits takes the next few waiting events of its line with it
 * (`run_gate.state` `following`, `follows` = the admitted event's id): the
 * process runs them one after the other after it, and records them together.
 * They never hold a slot and no one else admits them; when their head's run
 * is recorded or released, those it did not run go back to waiting.
 */
export const lineFollowersMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("run_gate").addColumn("follows", "text").execute();
  },
};
