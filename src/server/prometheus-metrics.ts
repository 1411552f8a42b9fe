/**
 * The engine's Metrics port over prom-client, and what is read at scrape
 * time: the delivery queue (one cheap store query per scrape), the runner
 * pool, and prom-client's default process metrics. One Registry per server,
 * never prom-client's global one, so that a test may start several servers
 * in one process.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "pino";
import type { DeliveryQueueStats, ProcessRole } from "../domain/processes.js";
import type { Metrics } from "../engine/metrics.js";
import type { RunnerPoolUsage } from "../sandbox/sandbox.js";

export interface PrometheusMetricsOptions {
  /** The delivery queue's figures, read at each scrape. */
  queueStats: () => Promise<DeliveryQueueStats>;
  /** The runner pool's use, read at each scrape. */
  poolUsage: () => RunnerPoolUsage;
  instanceId: string;
  role: ProcessRole;
  version: string;
  logger: Logger;
}

export interface PrometheusMetrics extends Metrics {
  /** The exposition text, in Prometheus' format. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** Seconds: from a fast HTTP-triggered source (a few ms) to the longest run a timer allows (300 s). */
const RUN_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Error codes are a closed set of names; anything else (never expected) is folded so labels stay few. */
const ERROR_CODE = /^[A-Za-z]{1,40}$/;

export function createPrometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const runs = new Counter({ name: "runnel_runs_total", help: "Runs ended: sources' calls and workflows' runs, by what triggered them and how they ended.", labelNames: ["kind", "trigger", "outcome"] as const, registers: [registry] });
  const errors = new Counter({ name: "runnel_run_errors_total", help: "Runs that ended in an error, by error code (Timeout, UserError, OutOfMemory, ...).", labelNames: ["kind", "code"] as const, registers: [registry] });
  const events = new Counter({ name: "runnel_events_emitted_total", help: "Events appended by sources and workflows (log lines not counted).", labelNames: ["kind"] as const, registers: [registry] });
  const latency = new Histogram({ name: "runnel_run_duration_seconds", help: "Run latency: a source's call in the sandbox; a workflow's run from its start to its record.", labelNames: ["kind", "trigger"] as const, buckets: RUN_SECONDS_BUCKETS, registers: [registry] });

  // One store read serves the queue's gauges of one scrape.
  let queueRead: { at: number; stats: Promise<DeliveryQueueStats | null> } | null = null;
  const readQueue = (): Promise<DeliveryQueueStats | null> => {
    const now = Date.now();
    if (!queueRead || now - queueRead.at > 500) {
      queueRead = {
        at: now,
        stats: options.queueStats().catch((error: unknown) => {
          options.logger.warn({ err: error }, "metrics: the delivery queue could not be read; its gauges are left out of this scrape");
          return null;
        }),
      };
    }
    return queueRead.stats;
  };
  const queueGauge = (name: string, help: string, value: (stats: DeliveryQueueStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const stats = await readQueue();
        if (stats) this.set(value(stats));
        else this.reset();
      },
    });
  queueGauge("runnel_delivery_queue_waiting", "Deliveries (runs to be made) waiting in the queue, due now or backing off before a retry.", (stats) => stats.waiting);
  queueGauge("runnel_delivery_queue_running", "Deliveries claimed by a process and running.", (stats) => stats.running);
  queueGauge("runnel_delivery_queue_oldest_wait_seconds", "How long the oldest waiting delivery has waited since its event was recorded; 0 when none waits.", (stats) => stats.oldestWaitMs / 1000);

  new Gauge({
    name: "runnel_runners",
    help: "Runner processes of this server's sandbox, by state: busy with a batch, or idle (spares included).",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const usage = options.poolUsage();
      this.set({ state: "busy" }, usage.busy);
      this.set({ state: "idle" }, usage.idle);
    },
  });
  new Gauge({
    name: "runnel_runners_max",
    help: "Runner processes this server may have at most (RUNNEL_MAX_RUNNERS; memory may allow fewer).",
    registers: [registry],
    collect() {
      this.set(options.poolUsage().max);
    },
  });
  let coldStartsSeen = 0;
  new Counter({
    name: "runnel_runner_cold_starts_total",
    help: "Batches that waited for a runner process to start (no warm runner of their owner and no spare).",
    registers: [registry],
    collect() {
      // The pool counts; the counter catches up at each scrape, so that the pool pays nothing for it.
      const now = options.poolUsage().coldStarts;
      if (now > coldStartsSeen) this.inc(now - coldStartsSeen);
      coldStartsSeen = now;
    },
  });
  new Gauge({ name: "runnel_process_info", help: "This process: its instance id, role and version (always 1).", labelNames: ["instance_id", "role", "version"] as const, registers: [registry] }).set(
    { instance_id: options.instanceId, role: options.role, version: options.version },
    1,
  );

  return {
    enabled: true,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    runEnded({ kind, trigger, outcome, durationMs, errorCode }) {
      runs.inc({ kind, trigger, outcome });
      latency.observe({ kind, trigger }, Math.max(0, durationMs) / 1000);
      if (outcome === "error") errors.inc({ kind, code: errorCode && ERROR_CODE.test(errorCode) ? errorCode : "Other" });
    },
    eventsEmitted(kind, count) {
      events.inc({ kind }, count);
    },
  };
}
