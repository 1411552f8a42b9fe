import { createPostgresBackend, Queue, Worker, withBackend, type Processor, type QueueOptions, type WorkerOptions } from "bullmq";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { LiveChannel } from "../live-channel.js";
import { postgresHeldJobs, redisHeldJobs, type HeldJobs } from "./held-jobs.js";
import { PostgresLiveChannel } from "./postgres-live-channel.js";
import { postgresReadyJobs, type ReadyJobs } from "./ready-jobs.js";
import { RedisLiveChannel } from "./redis-live-channel.js";
import { throttledWarning } from "../throttled-warning.js";

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
  /** A worker; `connections`: how many of its calls may be in flight at once (PostgreSQL: its pool's size). */
  worker(name: string, processor: Processor | null, connections: number, settings: WorkerSettings): Worker;
  readonly live: LiveChannel;
  /** The jobs a worker name holds, read from BullMQ's storage (takeBackInterrupted). */
  readonly held: HeldJobs;
  /** PostgreSQL only: how many jobs a claim would find now (a claim's next wave is sized by it; see BullmqJobQueue.claim). */
  readonly readyJobs: ReadyJobs | null;
  /**
   * PostgreSQL only: calls `listener` whenever jobs of queue `name` become
   * claimable in any process, from BullMQ's own NOTIFY (see JobQueue.onQueuedJobs).
   */
  readonly queuedJobs: ((name: string, listener: () => void) => Promise<() => Promise<void>>) | null;
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
    // One connection carries any number of calls at once (pipelined).
    worker: (name, processor, _connections, settings) => new Worker(name, processor, { ...settings, connection, prefix }),
    live,
    held: redisHeldJobs(connection, prefix),
    // A claim that finds nothing is one script on Redis: cheaper than asking first.
    readyJobs: null,
    // BullMQ on Redis marks new jobs for blocked workers only; the engine's claimers are woken by its own wake-ups.
    queuedJobs: null,
    async close() {
      await live.close();
      await closeRedis(connection);
    },
  };
}

/**
 * The channel BullMQ's PostgreSQL backend NOTIFYs, with the queue's name as
 * payload, whenever jobs become claimable: each add, promotion, retry and
 * stalled job taken back, at their commit (its `waitForJob` listens there;
 * the name is private to it). Shared by every schema of the database: a
 * queue of the same name in another schema wakes a claim that finds nothing.
 */
const BULLMQ_JOBS_CHANNEL = "bullmq_jobs";

/** Connections of each BullMQ queue or worker's pool on PostgreSQL (BullMQ runs at one; its LISTEN client is apart). */
const POOL_PER_QUEUE_OBJECT = 2;

function postgresBackend(url: string, schema: string, logger: Logger): BullmqBackend {
  const classes = withBackend(createPostgresBackend);
  // A config object, not the bare URL: only that form carries the schema (see PostgresConnectionOptions). BullMQ
  // makes or updates its tables on connecting, under an advisory lock: processes starting together do it once.
  // Each of BullMQ's queues and workers opens a pool of its own (and a LISTEN client): two connections each, not
  // pg's default ten, or a few processes of an installation fill PostgreSQL's max_connections (100 by default).
  const connection = { connectionString: pinnedSearchPath(url, schema), schema, migrate: true, max: POOL_PER_QUEUE_OBJECT };
  const live = new PostgresLiveChannel(url, `${schema}_live`, logger);
  const readyJobs = postgresReadyJobs(url, schema, logger);
  return {
    kind: "postgres",
    // The PostgreSQL classes are BullMQ's own, over another backend: the same methods, typed apart.
    queue: (name, settings) => new classes.Queue(name, { ...settings, connection }) as unknown as Queue,
    worker: (name, processor, connections, settings) =>
      new classes.Worker(name, processor, { ...settings, connection: { ...connection, max: Math.max(POOL_PER_QUEUE_OBJECT, connections) } }) as unknown as Worker,
    live,
    held: postgresHeldJobs(url, schema),
    readyJobs,
    queuedJobs: (name, listener) => live.subscribeForeign(BULLMQ_JOBS_CHANNEL, (payload) => payload === name && listener()),
    async close() {
      await readyJobs.close().catch(() => undefined);
      await live.close();
    },
  };
}

/**
 * The URL with the queue's schema first on its search_path. BullMQ pins it
 * through the pool's `options`, but pg lets a URL's own `options` (such as
 * `-c search_path=…`, which a store in a schema of its own uses) override
 * that, and BullMQ's plain queries (its job schedulers' reads) then miss
 * their tables. A later `-c` wins, so the schema goes last.
 */
export function pinnedSearchPath(url: string, schema: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // Not a URL pg would parse with options either: BullMQ's own pinning holds.
  }
  const own = parsed.searchParams.get("options");
  if (own === null) return url;
  parsed.searchParams.set("options", `${own} -c search_path="${schema.replace(/"/g, '""')}"`);
  return parsed.toString();
}

/** Quits politely when connected; a connection still trying (a bad URL) is cut, or its retries would go on. */
export async function closeRedis(connection: Redis): Promise<void> {
  if (connection.status === "ready") await connection.quit().catch(() => connection.disconnect());
  else connection.disconnect();
}
