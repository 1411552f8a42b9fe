import { randomBytes } from "node:crypto";
import pg from "pg";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describeJobQueueConformance } from "./conformance.js";
import { localFixture } from "./local-fixture.js";

// The local adapter over a PostgreSQL store: processes sharing one database (RUNNEL_QUEUE=local with DATABASE_URL).
await requirePostgres();

describeJobQueueConformance("local (PostgreSQL store, EventHub)", async () => {
  const schema = `runnel_queue_local_${randomBytes(5).toString("hex")}`;
  return localFixture({
    connect: () => createPostgresStore({ connectionString: TEST_DATABASE_URL, schema, maxConnections: 4 }),
    async drop() {
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  });
});
