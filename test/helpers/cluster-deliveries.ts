import type { Job, Queue } from "bullmq";
import pino from "pino";
import { openBullmqBackend, type BullmqBackend } from "../../src/queue/bullmq/bullmq-backend.js";
import type { createTestSchema } from "./postgres.js";

/**
 * Where a cluster's deliveries are, seen from outside: the store's rows
 * (appended, not yet relayed to the queue) and BullMQ's delivery jobs
 * (waiting, delayed, or held by a worker process, which BullMQ records as
 * the job's `processedBy`: the process's instance id).
 */
export interface ClusterDeliveries {
  /** The deliveries a process holds now (rows it leased, jobs it is running), by listener. */
  heldBy(instanceId: string): Promise<Map<string, number>>;
  /** The processes holding a delivery of `listenerId` on `channel` now. */
  holdersOf(listenerId: string, channel: string): Promise<string[]>;
  /** The deliveries of `listenerId` not finished: rows left, jobs not completed. */
  unfinished(listenerId: string): Promise<number>;
  /** The delivery jobs BullMQ completed (kept for a day). */
  completedJobs(): Promise<number>;
  close(): Promise<void>;
}

type Schema = Awaited<ReturnType<typeof createTestSchema>>;

const UNFINISHED_STATES = ["waiting", "delayed", "active", "prioritized", "paused", "waiting-children"] as const;

export function clusterDeliveries(schema: Schema, target: { kind: "redis"; url: string; namespace: string } | { kind: "postgres"; url: string; namespace: string }): ClusterDeliveries {
  const backend: BullmqBackend = openBullmqBackend(target, pino({ level: "silent" }));
  const queue: Queue = backend.queue("deliveries");
  const rows = async (where: string, values: unknown[]) =>
    (await schema.admin.query(`SELECT listener_id, claimed_by, COUNT(*) AS n FROM ${schema.schema}.deliveries WHERE ${where} GROUP BY listener_id, claimed_by`, values)).rows as Array<{ listener_id: string; claimed_by: string | null; n: string }>;
  const jobs = async (states: readonly string[]): Promise<Job[]> => (await queue.getJobs([...states] as any, 0, -1)).filter((job): job is Job => Boolean(job));
  return {
    async heldBy(instanceId) {
      const held = new Map<string, number>();
      for (const row of await rows(`status = 'running' AND claimed_by = $1`, [instanceId])) held.set(row.listener_id, (held.get(row.listener_id) ?? 0) + Number(row.n));
      for (const job of await jobs(["active"])) {
        if (job.processedBy !== instanceId) continue;
        held.set(job.data.listenerId, (held.get(job.data.listenerId) ?? 0) + 1);
      }
      return held;
    },
    async holdersOf(listenerId, channel) {
      const holders = (await rows(`status = 'running' AND listener_id = $1 AND channel = $2`, [listenerId, channel])).map((row) => row.claimed_by ?? "");
      for (const job of await jobs(["active"])) if (job.data.listenerId === listenerId && job.data.channel === channel) holders.push(job.processedBy ?? "");
      return holders;
    },
    async unfinished(listenerId) {
      const inStore = (await rows(`listener_id = $1`, [listenerId])).reduce((sum, row) => sum + Number(row.n), 0);
      const queued = (await jobs(UNFINISHED_STATES)).filter((job) => job.data.listenerId === listenerId).length;
      return inStore + queued;
    },
    completedJobs: () => queue.getCompletedCount(),
    async close() {
      await queue.close();
      await backend.close();
    },
  };
}
