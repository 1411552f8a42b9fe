import type { Logger } from "pino";
import type { RunnelConfig } from "../config/config.js";
import type { TimerSchedule } from "../domain/sources.js";
import type { Store } from "../store/store.js";
import type { JobQueue } from "./job-queue.js";
import { LocalJobQueue, type LiveHub } from "./local/local-job-queue.js";

export interface OpenJobQueueOptions {
  store: Store;
  /** The engine's EventHub: the local adapter's live messages. */
  hub: LiveHub;
  /** The engine's rule for a timer's next tick (the local adapter's timers). */
  nextTickAfter: (schedule: TimerSchedule, previousDue: number, now: number) => number;
  logger: Logger;
  /** This process's instance id (the local adapter records it with its leases). */
  claimer?: string | undefined;
  /** How long a claimed delivery is this instance's from its last renewal before another may take it over (RUNNEL_DELIVERY_LEASE_SECONDS). Default 30 s. */
  leaseMs?: number | undefined;
  /** The BullMQ adapter's namespace: a Redis key prefix or a PostgreSQL schema (tests use one each). Default: "runnel" / "runnel_queue". */
  namespace?: string;
}

/**
 * The job queue RUNNEL_QUEUE asks for: the store's own ("local"), or BullMQ
 * on REDIS_URL ("redis") or on DATABASE_URL alone ("postgres"). A BullMQ
 * backend that does not answer stops here, naming its variable.
 */
export async function openJobQueue(config: Pick<RunnelConfig, "queue" | "redisUrl" | "databaseUrl">, options: OpenJobQueueOptions): Promise<JobQueue> {
  const namespace = options.namespace !== undefined ? { namespace: options.namespace } : {};
  // A dead claimer's jobs are looked for twice per lease: they are taken over within half a lease after it ends.
  const lease = {
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs, stallCheckMs: stallCheckFor(options.leaseMs) } : {}),
    ...(options.claimer ? { claimer: options.claimer } : {}),
  };
  if (config.queue === "local") {
    return new LocalJobQueue({ store: options.store, hub: options.hub, nextTickAfter: options.nextTickAfter, logger: options.logger, ...(options.claimer ? { claimer: options.claimer } : {}), ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}) });
  }
  // BullMQ (with ioredis and pg) is loaded only by an installation that uses it: the embedded default's start does not pay for it.
  const { BullmqJobQueue } = await import("./bullmq/bullmq-job-queue.js");
  // loadConfig refuses "redis" without REDIS_URL, and a shared queue without DATABASE_URL.
  const url = config.queue === "redis" ? required(config.redisUrl, "REDIS_URL") : required(config.databaseUrl, "DATABASE_URL");
  return BullmqJobQueue.open({ target: { kind: config.queue, url, ...namespace }, logger: options.logger, ...lease });
}

/** How often an instance looks for claims whose lease ran out: every half lease, at most every 15 s (BullMQ runs one check per interval across all instances). */
export function stallCheckFor(leaseMs: number): number {
  return Math.min(15_000, Math.max(250, Math.floor(leaseMs / 2)));
}

function required(value: string | null, variable: string): string {
  if (value === null) throw new Error(`${variable} is not set, and the job queue needs it (RUNNEL_QUEUE).`);
  return value;
}
