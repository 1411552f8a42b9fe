import type { Kysely, Migration } from "kysely";

/**
 * The source map of a saved component's bundle (JSON), so that stack traces
 * name the component's own file, line and column. Components saved before
 * have none (null): their frames are only cleaned of the server's paths.
 */
export const bundleSourceMapsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("components").addColumn("bundle_map", "text").execute();
  },
};
