import rateLimit from "@fastify/rate-limit";
import Fastify from "fastify";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresRateLimit, RATE_LIMIT_TABLE, type PostgresRateLimit } from "../../src/server/rate-limit/postgres-rate-limit-store.js";
import { createTestSchema } from "../helpers/postgres.js";

/**
 * The PostgreSQL store of the per-key rate limit (RUNNEL_QUEUE=postgres), on
 * the local PostgreSQL: two "processes" (two pools, two stores) count into
 * one window, a window ends and starts over, and a database that does not
 * answer lets requests through.
 */

type Store = { incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number, max?: number): void; child(options: unknown): Store };

const incr = (store: Store, key: string, windowMs: number) =>
  new Promise<{ current: number; ttl: number }>((resolve, reject) => store.incr(key, (error, result) => (error ? reject(error) : resolve(result!)), windowMs, 1_000));

describe("PostgreSQL rate limit store", () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  const pools: pg.Pool[] = [];
  const limits: PostgresRateLimit[] = [];
  const errors: unknown[] = [];

  const open = async () => {
    const pool = new pg.Pool({ connectionString: schema.databaseUrl, max: 2 });
    pools.push(pool);
    // Both "processes" open it at once, as api processes starting together do: one makes the table.
    const limit = await openPostgresRateLimit({ pool, schema: `${schema.schema}_q`, onError: (error) => errors.push(error) });
    limits.push(limit);
    return new (limit.store as unknown as new (settings: unknown) => Store)({});
  };

  beforeAll(async () => {
    schema = await createTestSchema("rate_limit");
  });
  afterAll(async () => {
    for (const limit of limits) limit.close();
    await Promise.all(pools.map((pool) => pool.end()));
    await schema.admin.query(`DROP SCHEMA IF EXISTS ${schema.schema}_q CASCADE`);
    await schema.drop();
  });

  it("counts a key's requests from two processes in one window, and starts a new window when it ends", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const first = await incr(a!, "ak_one", 1_500);
    expect(first.current).toBe(1);
    expect(first.ttl).toBeGreaterThan(1_000);
    expect(first.ttl).toBeLessThanOrEqual(1_500);
    expect((await incr(b!, "ak_one", 1_500)).current).toBe(2);
    expect((await incr(a!, "ak_one", 1_500)).current).toBe(3);
    // Another key has its own count.
    expect((await incr(b!, "ak_two", 1_500)).current).toBe(1);
    // Many at once from both: none lost (one UPSERT each, serialised on the row).
    const burst = await Promise.all(Array.from({ length: 20 }, (_, n) => incr(n % 2 ? a! : b!, "ak_one", 1_500)));
    expect(burst.map((result) => result.current).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, n) => n + 4));
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const next = await incr(b!, "ak_one", 1_500);
    expect(next.current).toBe(1);
    expect(next.ttl).toBeGreaterThan(1_000);
    const rows = await schema.admin.query(`SELECT relpersistence FROM pg_class WHERE relname = $1 AND relnamespace = $2::regnamespace`, [RATE_LIMIT_TABLE, `${schema.schema}_q`]);
    expect(rows.rows).toEqual([{ relpersistence: "u" }]);
    expect(errors).toEqual([]);
  });

  it("lets requests through (skipOnError) and reports why when the database does not answer", async () => {
    const pool = new pg.Pool({ connectionString: schema.databaseUrl, max: 1 });
    const reported: unknown[] = [];
    const limit = await openPostgresRateLimit({ pool, schema: `${schema.schema}_q`, onError: (error) => reported.push(error) });
    await pool.end();
    const app = Fastify();
    await app.register(rateLimit, { store: limit.store, skipOnError: true, max: 1, timeWindow: 60_000 });
    app.get("/", async () => ({ ok: true }));
    try {
      expect((await app.inject({ method: "GET", url: "/" })).statusCode).toBe(200);
      expect((await app.inject({ method: "GET", url: "/" })).statusCode).toBe(200);
      expect(reported.length).toBe(2);
    } finally {
      limit.close();
      await app.close();
    }
  });
});
