/**
 * Where the per-key rate limit counts, from the configuration: in each
 * process (one process, or RUNNEL_QUEUE=local: nothing added), in Redis
 * (RUNNEL_QUEUE=redis: the plugin's own Redis store, under the queue's
 * namespace), or in PostgreSQL (RUNNEL_QUEUE=postgres).
 */
import type { Logger } from "pino";
import type { SharedRateLimit } from "../../api/app.js";
import type { RunnelConfig } from "../../config/config.js";

export interface OpenedRateLimit {
  /** For createApp; null: counted in this process. */
  shared: SharedRateLimit | null;
  close(): Promise<void>;
}

/** How long a start waits for the rate limit's Redis before it stops, naming REDIS_URL. */
const CONNECT_TIMEOUT_MS = 10_000;
/** A limiter that cannot reach its backend lets requests through, and says so at most this often. */
const WARN_EVERY_MS = 10_000;

export async function openSharedRateLimit(config: Pick<RunnelConfig, "queue" | "redisUrl" | "databaseUrl" | "queueNamespace" | "rateLimitPerMinute">, logger: Logger): Promise<OpenedRateLimit> {
  if (config.queue === "local" || config.rateLimitPerMinute === 0) return { shared: null, close: async () => undefined };
  let lastWarning = 0;
  const onError = (error: unknown) => {
    if (Date.now() - lastWarning < WARN_EVERY_MS) return;
    lastWarning = Date.now();
    logger.warn({ err: error }, `the shared rate limit's ${config.queue === "redis" ? "Redis" : "database"} does not answer: requests are let through uncounted until it does`);
  };
  // Each client is loaded only by an installation that counts there.
  if (config.queue === "redis") {
    const { Redis } = await import("ioredis");
    // Its own connection: the queue's are BullMQ's. No offline queue: while Redis is away, a request is let through at once rather than held.
    const redis = new Redis(config.redisUrl!, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: CONNECT_TIMEOUT_MS });
    redis.on("error", onError);
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      throw new Error(`REDIS_URL: the rate limit's Redis did not answer (${error instanceof Error ? error.message : String(error)}). Check REDIS_URL and that Redis is running.`);
    }
    return {
      shared: { redis, nameSpace: `${config.queueNamespace ?? "runnel"}:rate-limit:` },
      close: async () => {
        await redis.quit().catch(() => redis.disconnect());
      },
    };
  }
  const [{ default: pg }, { openPostgresRateLimit }] = await Promise.all([import("pg"), import("./postgres-rate-limit-store.js")]);
  const pool = new pg.Pool({ connectionString: config.databaseUrl!, max: 4 });
  pool.on("error", onError);
  try {
    const limit = await openPostgresRateLimit({ pool, schema: config.queueNamespace ?? "runnel_queue", onError });
    return {
      shared: { store: limit.store },
      close: async () => {
        limit.close();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`DATABASE_URL: the rate limit's table could not be made (${error instanceof Error ? error.message : String(error)}).`);
  }
}
