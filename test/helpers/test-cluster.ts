import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { ServerProcess } from "../../src/chaos/server-process.js";
import { freePort } from "./ports.js";
import { createTestSchema, TEST_DATABASE_URL } from "./postgres.js";
import { call } from "./server.js";

export const REDIS_URL = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export type QueueKind = "redis" | "postgres";

/** The parts of an installation of several processes (the built binary; `npm run build` first) that a test starts. */
export interface ClusterFixture {
  queue: QueueKind;
  schema: Awaited<ReturnType<typeof createTestSchema>>;
  /** The installation's corner of the queue backend (Redis key prefix, or BullMQ's PostgreSQL schema). */
  namespace: string;
  /** Where the queue is, as the BullMQ adapter and test/helpers/cluster-deliveries.ts take it. */
  target: { kind: QueueKind; url: string; namespace: string };
  /** Starts a process of `role` on a data folder of its own, with the installation's settings. */
  start(role: "api" | "worker"): Promise<{ server: ServerProcess; dataDir: string }>;
  /** The admin's API key, which the first process to start wrote to its data folder. */
  adminKeyOf(dataDir: string): Promise<string>;
  /** Stops every process, then removes the queue's keys or schema, the store's schema and the folders. */
  stop(): Promise<void>;
}

/**
 * One PostgreSQL schema, one queue namespace, one master key (a secret
 * sealed by one process is opened by another) for every process started.
 */
export async function createClusterFixture(queue: QueueKind, prefix: string, env: Record<string, string> = {}): Promise<ClusterFixture> {
  // One installation of several processes at a time across the test files: each process holds PostgreSQL
  // connections (its store's pool, the queue's), and two installations at once could fill max_connections.
  const lock = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await lock.connect();
  await lock.query("SELECT pg_advisory_lock(hashtext('runnel-test-cluster'))");
  const schema = await createTestSchema(prefix).catch(async (error: unknown) => {
    await lock.end();
    throw error;
  });
  const namespace = `${prefix}_q_${randomBytes(4).toString("hex")}`;
  const shared = {
    DATABASE_URL: schema.databaseUrl,
    RUNNEL_QUEUE: queue,
    RUNNEL_QUEUE_NAMESPACE: namespace,
    RUNNEL_MASTER_KEY: randomBytes(32).toString("hex"),
    RUNNEL_LOG_LEVEL: "warn",
    // Four connections a store, not ten: a 2 api + 3 worker installation held up to 76 connections with ten,
    // and with three test files at once beside it, PostgreSQL's 100 were nearly all taken (81 seen in CI).
    RUNNEL_DATABASE_POOL_SIZE: "4",
    ...(queue === "redis" ? { REDIS_URL } : {}),
    ...env,
  };
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  return {
    queue,
    schema,
    namespace,
    target: queue === "redis" ? { kind: queue, url: REDIS_URL, namespace } : { kind: queue, url: schema.databaseUrl, namespace },
    async start(role) {
      const dataDir = await mkdtemp(join(tmpdir(), `runnel-${role}-`));
      dirs.push(dataDir);
      const server = new ServerProcess({ dataDir, port: await freePort(), env: { ...shared, RUNNEL_ROLE: role }, startTimeoutMs: 90_000 });
      servers.push(server);
      await server.start();
      return { server, dataDir };
    },
    async adminKeyOf(dataDir) {
      return (await readFile(join(dataDir, "admin-api-key"), "utf8")).trim();
    },
    async stop() {
      try {
        await Promise.all(servers.map((server) => server.stop()));
        if (queue === "redis") {
          const redis = new Redis(REDIS_URL);
          const keys = await redis.keys(`${namespace}:*`);
          if (keys.length > 0) await redis.del(...keys);
          await redis.quit();
        } else {
          await schema.admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(namespace)} CASCADE`);
        }
        await schema.drop();
        await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
      } finally {
        // Whatever failed above, the next test file's installation may start.
        await lock.end().catch(() => undefined);
      }
    },
  };
}

/** Reads until `done` holds, every 100 ms; throws naming `what` and the last value after `timeoutMs`. */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value).slice(0, 1500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A write that must succeed (200 or 201); its `data`. */
export async function send(url: string, method: "POST" | "PUT", path: string, key: string, body: unknown): Promise<any> {
  const answer = await call(url, method, path, { key, json: body });
  if (answer.status !== 200 && answer.status !== 201) throw new Error(`${method} ${path} failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}
