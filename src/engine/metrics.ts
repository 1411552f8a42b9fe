/**
 * What the engine tells about its work, for /metrics. The engine records
 * through this small port and never sees Prometheus: the server hands in
 * either the prom-client implementation (server/prometheus-metrics.ts) or
 * NO_METRICS, whose methods do nothing, so that with metrics off the hot
 * path pays one empty call per batch.
 */

/** What started a run: an HTTP request, a timer, a person (run now, test, replay), or another emitter's event. */
export type RunTriggerKind = "http" | "timer" | "manual" | "emit";

export type RunOutcome = "success" | "error";

/** Who ran: a source's code or a workflow's steps. */
export type RunnerKind = "source" | "workflow";

export interface Metrics {
  /** False for NO_METRICS: callers may skip work done only to record (counting, mapping). */
  readonly enabled: boolean;
  /** A run ended: a source's call (its time in the sandbox) or a workflow's run (from its start to its record). */
  runEnded(run: { kind: RunnerKind; trigger: RunTriggerKind; outcome: RunOutcome; durationMs: number; errorCode?: string | undefined }): void;
  /** Events appended by sources or workflows (not log lines). */
  eventsEmitted(kind: RunnerKind, count: number): void;
}

export const NO_METRICS: Metrics = {
  enabled: false,
  runEnded() {},
  eventsEmitted() {},
};
