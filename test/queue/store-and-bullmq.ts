import { Queue } from "bullmq";
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Logger } from "pino";
import { BullmqJobQueue } from "../../src/queue/bullmq/bullmq-job-queue.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import type { Store } from "../../src/store/store.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { obliterateQueues, uniqueNamespace } from "./bullmq-fixture.js";

export const TEST_REDIS_URL = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * What scale-out's engine parts sit between: a PostgreSQL store in a schema
 * of its own and BullMQ on Redis under a namespace of its own, both removed
 * by `dispose`.
 */
export async function openStoreAndBullmq(prefix: string, logger: Logger): Promise<{ store: Store; queue: BullmqJobQueue; dispose(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(5).toString("hex")}`;
  const namespace = uniqueNamespace(prefix);
  const store = createPostgresStore({ connectionString: TEST_DATABASE_URL, schema, maxConnections: 4 });
  await store.migrate();
  const queue = await BullmqJobQueue.open({ target: { kind: "redis", url: TEST_REDIS_URL, namespace }, logger, leaseMs: 60_000 });
  return {
    store,
    queue,
    async dispose() {
      await queue.close().catch(() => undefined);
      await obliterateQueues((name) => new Queue(name, { connection: { url: TEST_REDIS_URL }, prefix: namespace }));
      await store.close();
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await admin.end();
    },
  };
}
