/**
 * A store for @fastify/rate-limit in PostgreSQL, for installations without
 * Redis (RUNNEL_QUEUE=postgres): every api process counts a key's requests
 * in one row, so the limit is the installation's, not each process's.
 *
 * One statement per request: an UPSERT that starts a new window when the
 * key's has ended, or adds one to it, and answers the count and what is
 * left of the window. The time is the database's (clock_timestamp()), so
 * machines whose clocks differ share one window. The table is UNLOGGED:
 * counts are worth no WAL, and a crash that empties it only forgives a
 * minute's requests.
 */
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from "@fastify/rate-limit";
import type pg from "pg";

/** The table's name inside the queue's schema (RUNNEL_QUEUE_NAMESPACE, default runnel_queue). */
export const RATE_LIMIT_TABLE = "runnel_rate_limit_windows";

/** Windows that ended this long ago are deleted (a key that stopped calling leaves no row behind for ever). */
const SWEEP_EVERY_MS = 5 * 60_000;

const NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

export interface PostgresRateLimitOptions {
  pool: pg.Pool;
  /** The schema of the table (created if missing). */
  schema: string;
  /** Called when the database does not answer: the request is let through (the plugin's skipOnError). */
  onError(error: unknown): void;
}

export interface PostgresRateLimit {
  /** What @fastify/rate-limit's `store` option takes. */
  store: FastifyRateLimitStoreCtor;
  /** Stops the sweep (the pool is the caller's). */
  close(): void;
}

/** Creates the table if needed and returns the store class for the plugin. */
export async function openPostgresRateLimit(options: PostgresRateLimitOptions): Promise<PostgresRateLimit> {
  const { pool, schema } = options;
  const table = `${escapeIdentifier(schema)}.${RATE_LIMIT_TABLE}`;
  await createTable(pool, schema, table);
  const upsert = {
    name: `runnel-rate-limit-${schema}`,
    text: `INSERT INTO ${table} AS w (key, hits, resets_at) VALUES ($1, 1, ${NOW_MS} + $2::bigint)
      ON CONFLICT (key) DO UPDATE SET
        hits = CASE WHEN w.resets_at <= EXCLUDED.resets_at - $2::bigint THEN 1 ELSE w.hits + 1 END,
        resets_at = CASE WHEN w.resets_at <= EXCLUDED.resets_at - $2::bigint THEN EXCLUDED.resets_at ELSE w.resets_at END
      RETURNING hits, (resets_at - ${NOW_MS})::integer AS ttl`,
  };
  const sweep = setInterval(() => {
    pool.query(`DELETE FROM ${table} WHERE resets_at < ${NOW_MS} - 60000`).catch(options.onError);
  }, SWEEP_EVERY_MS);
  sweep.unref();

  class PostgresStore implements FastifyRateLimitStore {
    // The plugin makes it with its settings (`new Store(settings)`); a child (a route's own limit) with a key prefix.
    constructor(
      _settings?: unknown,
      private readonly prefix = "",
    ) {}

    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number): void {
      pool.query<{ hits: number; ttl: number }>({ ...upsert, values: [this.prefix + key, timeWindow ?? 60_000] }).then(
        ({ rows: [row] }) => callback(null, { current: row!.hits, ttl: Math.max(0, row!.ttl) }),
        (error: Error) => {
          options.onError(error);
          callback(error);
        },
      );
    }

    child(routeOptions: unknown): FastifyRateLimitStore {
      const route = (routeOptions as { routeInfo?: { method?: string; url?: string } }).routeInfo;
      return new PostgresStore(undefined, `${this.prefix}${route?.method ?? ""}${route?.url ?? ""}-`);
    }
  }
  return { store: PostgresStore as unknown as FastifyRateLimitStoreCtor, close: () => clearInterval(sweep) };
}

async function createTable(pool: pg.Pool, schema: string, table: string): Promise<void> {
  const client = await pool.connect();
  try {
    // Several api processes start at once: one creates, the others wait and find it made.
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [table]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${escapeIdentifier(schema)}`);
    await client.query(`CREATE UNLOGGED TABLE IF NOT EXISTS ${table} (key text PRIMARY KEY, hits integer NOT NULL, resets_at bigint NOT NULL)`);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function escapeIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
