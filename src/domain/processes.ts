/**
 * The processes of an installation: each server records itself in the store
 * and beats a heartbeat, so that any process (and `runnel status`) can list
 * them all, their role, version and load, and tell the ones that stopped
 * beating without saying goodbye.
 */

/** What a process serves: "all" is today's single process (API, runs, timers); api and worker come with scale-out. */
export type ProcessRole = "all" | "api" | "worker";

/** A process as it records itself. */
export interface ProcessRecord {
  /** Its instance id (one per data folder, kept across restarts). */
  instanceId: string;
  role: ProcessRole;
  version: string;
  host: string;
  pid: number;
  /** Where it listens, as it would be dialled (http://host:port). */
  url: string | null;
  startedAt: number;
  heartbeatAt: number;
  /** How often it beats: it is lost once its last beat is LOST_AFTER_BEATS of these old. */
  heartbeatIntervalMs: number;
  /** Runners busy with a batch when it last beat. */
  busyRunners: number;
  /** Deliveries it held, waiting for a slot to run, when it last beat. */
  queuedDeliveries: number;
}

/** Beats missed before a process is taken for lost: six, so 30 s at the default interval of 5 s. */
export const LOST_AFTER_BEATS = 6;

/** The default heartbeat interval. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;

export type ProcessState = "live" | "lost";

/** Live while its last beat is younger than LOST_AFTER_BEATS intervals; lost after (killed, frozen, cut off from the store). */
export function processStateOf(record: Pick<ProcessRecord, "heartbeatAt" | "heartbeatIntervalMs">, now: number): ProcessState {
  return now - record.heartbeatAt > LOST_AFTER_BEATS * record.heartbeatIntervalMs ? "lost" : "live";
}

/** The delivery queue as a whole, read at once: how many wait, how many run, and how long the oldest waiting one has. */
export interface DeliveryQueueStats {
  /** Deliveries waiting to run (due now, or backing off before a retry). */
  waiting: number;
  /** Deliveries claimed by a process and running (or held by a process that died, until its lease ends). */
  running: number;
  /** How long the oldest waiting delivery has waited since it was recorded, in ms; 0 when none waits. */
  oldestWaitMs: number;
}
