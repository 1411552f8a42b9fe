import type { Kysely, Migration } from "kysely";

/**
 * How many times a delivery's run was cut off by the process running it
 * dying (found running at a start, or claimed again after its lease ran
 * out): a delivery that keeps taking its process down is not run forever.
 */
export const deliveryInterruptionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("deliveries").addColumn("interruptions", "integer", (column) => column.notNull().defaultTo(0)).execute();
  },
};
