import { createPostgresBackend, Queue, Worker, withBackend, type Processor, type QueueOptions, type WorkerOptions } from "bullmq";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { LiveChannel } from "../live-channel.js";
import { PostgresLiveChannel } from "./postgres-live-channel.js";
import { RedisLiveChannel } from "./redis-live-channel.js";
import { throttledWarning } from "./throttled-warning.js";

/** Where BullMQ keeps its queues: Redis, or PostgreSQL alone (BullMQ 6's PostgreSQL backend). */
export type BullmqTarget =
  | { kind: "redis"; url: string; /** Key prefix of this installation's queues. Default "runnel". */ namespace?: string }
  | { kind: "postgres"; url: string; /** Schema of this installation's queues (BullMQ makes its tables there). Default "runnel_queue". */ namespace?: string };

/** Queue and worker options the adapter sets itself (the connection and the namespace come from the target). */
type QueueSettings = Omit<QueueOptions, "connection" | "prefix">;
type WorkerSettings = Omit<WorkerOptions, "connection" | "prefix">;

/**
 * The queue classes bound to one target, and its live channel. The two
 * backends take different connections and namespaces (a Redis key prefix,
 * a PostgreSQL schema); past this file they are the same Queue and Worker.
 */
export interface BullmqBackend {
  readonly kind: "redis" | "postgres";
  queue(name: string, settings?: QueueSettings): Queue;
  worker(name: string, processor: Processor | null, settings: WorkerSettings): Worker;
  readonly live: LiveChannel;
  /** Lets go of what the backend opened itself (the shared Redis connection, the live channel). */
  close(): Promise<void>;
}

export function openBullmqBackend(target: BullmqTarget, logger: Logger): BullmqBackend {
  return target.kind === "redis" ? redisBackend(target.url, target.namespace ?? "runnel", logger) : postgresBackend(target.url, target.namespace ?? "runnel_queue", logger);
}

function redisBackend(url: string, prefix: string, logger: Logger): BullmqBackend {
  // BullMQ's workers block on Redis: they must not give up on a slow reply (maxRetriesPerRequest null).
  const connection = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  connection.on("error", throttledWarning(logger, "queue: the Redis connection failed; reconnecting"));
  const live = new RedisLiveChannel(connection, `${prefix}:live`, logger);
  return {
    kind: "redis",
    queue: (name, settings) => new Queue(name, { ...settings, connection, prefix }),
    worker: (name, processor, settings) => new Worker(name, processor, { ...settings, connection, prefix }),
    live,
    async close() {
      await live.close();
      await closeRedis(connection);
    },
  };
}

function postgresBackend(url: string, schema: string, logger: Logger): BullmqBackend {
  const classes = withBackend(createPostgresBackend);
  // A config object, not the bare URL: only that form carries the schema (see PostgresConnectionOptions). BullMQ
  // makes or updates its tables on connecting, under an advisory lock: processes starting together do it once.
  const connection = { ...withoutOptions(url), schema, migrate: true };
  const live = new PostgresLiveChannel(url, `${schema}_live`, logger);
  return {
    kind: "postgres",
    // The PostgreSQL classes are BullMQ's own, over another backend: the same methods, typed apart.
    queue: (name, settings) => new classes.Queue(name, { ...settings, connection }) as unknown as Queue,
    worker: (name, processor, settings) => new classes.Worker(name, processor, { ...settings, connection }) as unknown as Worker,
    live,
    close: () => live.close(),
  };
}

/**
 * The URL's `options` (such as `-c search_path=…`) taken out of it and
 * passed beside it: pg lets the URL's win over the config's, which would
 * drop the `search_path` BullMQ adds to reach its own schema (its functions
 * would not be found). Given apart, BullMQ's comes after and wins.
 */
function withoutOptions(url: string): { connectionString: string; options?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url };
  }
  const options = parsed.searchParams.get("options");
  if (options === null) return { connectionString: url };
  parsed.searchParams.delete("options");
  return { connectionString: parsed.toString(), options };
}

/** Quits politely when connected; a connection still trying (a bad URL) is cut, or its retries would go on. */
export async function closeRedis(connection: Redis): Promise<void> {
  if (connection.status === "ready") await connection.quit().catch(() => connection.disconnect());
  else connection.disconnect();
}
