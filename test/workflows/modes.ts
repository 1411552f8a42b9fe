import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { createTestSchema } from "../helpers/postgres.js";
import { createUser, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The set-ups a run-control test runs on, each one server process: SQLite
 * and PostgreSQL with the local queue, and PostgreSQL with BullMQ on Redis
 * (test/scale/ runs api and workers apart; BullMQ on PostgreSQL alone is the
 * queue conformance suite's and the cluster tests': the gate, retries and
 * delays use the queue port only, which that suite holds to one contract). `env` makes
 * a fresh schema (and queue namespace) for the server; `drop` removes them.
 */
export interface Mode {
  name: string;
  env(): Promise<{ env: Record<string, string>; drop(): Promise<void> }>;
}

export const REDIS_URL = process.env.RUNNEL_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** The modes, their schemas named after `prefix` (a test file's own, so that concurrent files never share one). */
export function modes(prefix: string): Mode[] {
  return [
    { name: "SQLite, local queue", env: async () => ({ env: {}, drop: async () => undefined }) },
    {
      name: "PostgreSQL, local queue",
      env: async () => {
        const schema = await createTestSchema(prefix);
        return { env: { DATABASE_URL: schema.databaseUrl }, drop: () => schema.drop() };
      },
    },
    {
      name: "PostgreSQL, BullMQ on Redis",
      env: async () => {
        const schema = await createTestSchema(`${prefix}_redis`);
        const dropKeys = async () => {
          const redis = new Redis(REDIS_URL);
          const keys = await redis.keys(`${schema.schema}:*`);
          if (keys.length > 0) await redis.del(...keys);
          await redis.quit();
        };
        return { env: { DATABASE_URL: schema.databaseUrl, RUNNEL_QUEUE: "redis", REDIS_URL, RUNNEL_QUEUE_NAMESPACE: schema.schema }, drop: () => Promise.all([schema.drop(), dropKeys()]).then(() => undefined) };
      },
    },
  ];
}

/**
 * A real server on `mode` for a describe block's tests: started (with a
 * user named `userName`) before them, closed and its schema dropped after.
 * Read `server` and `key` inside the tests.
 */
export function serverOnMode(mode: Mode, userName: string): { readonly server: TestServer; readonly key: string; readonly userId: string; readonly env: Record<string, string> } {
  const held: { server?: TestServer; key?: string; userId?: string; env?: Record<string, string>; drop?: () => Promise<void> } = {};
  beforeAll(async () => {
    const setup = await mode.env();
    held.drop = setup.drop;
    held.env = setup.env;
    held.server = await startTestServer(setup.env);
    ({ key: held.key, id: held.userId } = await createUser(held.server, userName));
  });
  afterAll(async () => {
    await held.server?.close();
    await held.drop?.();
  });
  return {
    get server() {
      if (!held.server) throw new Error("the server is started in beforeAll: read it inside a test");
      return held.server;
    },
    get key() {
      if (held.key === undefined) throw new Error("the user is made in beforeAll: read it inside a test");
      return held.key;
    },
    get userId() {
      if (held.userId === undefined) throw new Error("the user is made in beforeAll: read it inside a test");
      return held.userId;
    },
    get env() {
      if (!held.env) throw new Error("the set-up is made in beforeAll: read it inside a test");
      return held.env;
    },
  };
}
