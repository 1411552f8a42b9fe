/**
 * This process in the installation's process registry: recorded at start,
 * beaten every `intervalMs` with its load, removed on a graceful stop. A
 * process that dies keeps its row, whose beat grows old: others show it as
 * lost (domain/processes.ts).
 */
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { ProcessRecord, ProcessRole } from "../domain/processes.js";
import type { Store } from "../store/store.js";

export interface ProcessRegistrationOptions {
  store: Store;
  instanceId: string;
  role: ProcessRole;
  version: string;
  url: string;
  intervalMs: number;
  /** The load to report at each beat. */
  load: () => { busyRunners: number; queuedDeliveries: number };
  logger: Logger;
  now?: () => number;
}

export class ProcessRegistration {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();
  private readonly startedAt: number;
  private readonly now: () => number;
  private stopped = false;

  constructor(private readonly options: ProcessRegistrationOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
  }

  /** Records this process now (a store that refuses stops the start), then beats on. */
  async start(): Promise<void> {
    await this.options.store.recordProcess(this.record());
    this.timer = setInterval(() => {
      // One beat at a time: a slow store never piles them up.
      this.beating = this.beating.then(() => this.beat());
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops beating and takes this process out of the registry. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.beating;
    try {
      await this.options.store.removeProcess(this.options.instanceId);
    } catch (error) {
      // It will show as lost: nothing is lost but a tidy list.
      this.options.logger.warn({ err: error }, "could not take this process out of the process registry; it shows as lost until it starts again");
    }
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.options.store.recordProcess(this.record());
    } catch (error) {
      this.options.logger.warn({ err: error }, "could not record this process's heartbeat; other processes will show it as lost if this goes on");
    }
  }

  private record(): ProcessRecord {
    const load = this.options.load();
    return {
      instanceId: this.options.instanceId,
      role: this.options.role,
      version: this.options.version,
      host: hostname(),
      pid: process.pid,
      url: this.options.url,
      startedAt: this.startedAt,
      heartbeatAt: this.now(),
      heartbeatIntervalMs: this.options.intervalMs,
      busyRunners: load.busyRunners,
      queuedDeliveries: load.queuedDeliveries,
    };
  }
}
