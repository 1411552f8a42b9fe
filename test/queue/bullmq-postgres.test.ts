import { createPostgresBackend, withBackend } from "bullmq";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describeJobQueueConformance } from "./conformance.js";
import { describeTickCatchUp } from "./tick-catch-up.js";
import { bullmqFixture, obliterateQueues, uniqueNamespace } from "./bullmq-fixture.js";

// PostgreSQL alone (RUNNEL_QUEUE=postgres): BullMQ 6's PostgreSQL backend, live messages over LISTEN/NOTIFY.
const { Queue } = withBackend(createPostgresBackend);
let admin: pg.Client;
const schemas: string[] = [];

beforeAll(async () => {
  await requirePostgres();
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
});

afterAll(async () => {
  for (const schema of schemas) {
    const left = await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    expect(left.rowCount).toBe(0);
  }
  await admin.end();
});

const makeFixture = async () => {
  const schema = uniqueNamespace("runnel_queue_test");
  schemas.push(schema);
  return bullmqFixture({ kind: "postgres", url: TEST_DATABASE_URL, namespace: schema }, async () => {
    await obliterateQueues((name) => new Queue(name, { connection: { connectionString: TEST_DATABASE_URL, schema } }) as never);
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  });
};
describeJobQueueConformance("BullMQ on PostgreSQL alone", makeFixture);
describeTickCatchUp("BullMQ on PostgreSQL alone", makeFixture);

it("names DATABASE_URL when PostgreSQL cannot be reached", async () => {
  const { BullmqJobQueue } = await import("../../src/queue/bullmq/bullmq-job-queue.js");
  const pino = (await import("pino")).default;
  await expect(
    BullmqJobQueue.open({ target: { kind: "postgres", url: "postgres://postgres@127.0.0.1:1/none" }, logger: pino({ level: "silent" }), connectTimeoutMs: 1_500 }),
  ).rejects.toThrow(/PostgreSQL at DATABASE_URL/);
}, 30_000);
