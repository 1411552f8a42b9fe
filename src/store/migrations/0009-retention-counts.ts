import type { Kysely, Migration } from "kysely";

/**
 * How many events each channel of an emitter holds, and how many log lines:
 * trimming to the retention then deletes the oldest rows beyond it, a cost
 * that grows with what is appended rather than with what is kept. Null (rows
 * from before, or after events were deleted by hand) means "count them".
 */
export const retentionCountsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("emitter_state").addColumn("channel_counts", "text").execute();
    await db.schema.alterTable("emitter_state").addColumn("log_count", "bigint").execute();
  },
};
