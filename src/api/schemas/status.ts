import { Type, type Static } from "@sinclair/typebox";
import { processStateOf, type DeliveryQueueStats, type ProcessRecord } from "../../domain/processes.js";
import { toEpochSeconds } from "./common.js";

export const ProcessSchema = Type.Object(
  {
    instance_id: Type.String({ description: "The process's instance id (one per data folder, kept across restarts)." }),
    role: Type.Union([Type.Literal("all"), Type.Literal("api"), Type.Literal("worker")], { description: "all: API, runs and timers in one process." }),
    version: Type.String(),
    host: Type.String(),
    pid: Type.Integer(),
    url: Type.Union([Type.String(), Type.Null()], { description: "Where it listens." }),
    state: Type.Union([Type.Literal("live"), Type.Literal("lost")], {
      description: "lost: its last heartbeat is older than six of its intervals (30 s by default): it was killed, froze, or lost the database.",
    }),
    self: Type.Boolean({ description: "This is the process that answered." }),
    started_at: Type.Integer({ description: "Epoch seconds." }),
    heartbeat_at: Type.Integer({ description: "Epoch seconds of its last heartbeat." }),
    heartbeat_age_ms: Type.Integer({ description: "How old its last heartbeat is." }),
    heartbeat_interval_ms: Type.Integer(),
    load: Type.Object({
      busy_runners: Type.Integer({ description: "Runner processes busy with a batch at its last heartbeat." }),
      queued_deliveries: Type.Integer({ description: "Deliveries it held waiting for a slot at its last heartbeat." }),
    }),
  },
  { title: "Process" },
);

export const StatusSchema = Type.Object(
  {
    processes: Type.Array(ProcessSchema, { description: "Every process of the installation, oldest start first." }),
    queues: Type.Object({
      deliveries: Type.Object({
        waiting: Type.Integer({ description: "Runs waiting to be made (due now, or backing off before a retry)." }),
        running: Type.Integer({ description: "Runs claimed by a process and under way." }),
        oldest_wait_ms: Type.Integer({ description: "How long the oldest waiting one has waited; 0 when none waits." }),
      }),
    }),
  },
  { title: "Status" },
);
export type StatusView = Static<typeof StatusSchema>;
export type ProcessView = Static<typeof ProcessSchema>;

export function toStatusView(processes: ProcessRecord[], queue: DeliveryQueueStats, selfId: string | null, now: number): StatusView {
  return {
    processes: processes.map((process) => ({
      instance_id: process.instanceId,
      role: process.role,
      version: process.version,
      host: process.host,
      pid: process.pid,
      url: process.url,
      state: processStateOf(process, now),
      self: process.instanceId === selfId,
      started_at: toEpochSeconds(process.startedAt),
      heartbeat_at: toEpochSeconds(process.heartbeatAt),
      heartbeat_age_ms: Math.max(0, now - process.heartbeatAt),
      heartbeat_interval_ms: process.heartbeatIntervalMs,
      load: { busy_runners: process.busyRunners, queued_deliveries: process.queuedDeliveries },
    })),
    queues: { deliveries: { waiting: queue.waiting, running: queue.running, oldest_wait_ms: Math.round(queue.oldestWaitMs) } },
  };
}
