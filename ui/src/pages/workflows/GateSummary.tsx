import type { WorkflowView } from "./types";

type Gate = NonNullable<WorkflowView["gate"]>;

/** What waits at a gated workflow's gate (settings.concurrency, rate_limit): shown in its facts, refreshed with the page. */
export function GateSummary({ gate, settings, now }: { gate: Gate; settings: WorkflowView["settings"]; now: number }) {
  const limits = [
    settings.concurrency !== undefined ? `${settings.concurrency} at a time${settings.concurrency_key ? ` per ${settings.concurrency_key}` : ""}` : null,
    settings.rate_limit ? `${settings.rate_limit.runs} per ${plural(settings.rate_limit.per_seconds, "second")}` : null,
  ].filter(Boolean);
  const parts = [
    `${gate.waiting} waiting`,
    `${gate.in_flight} running`,
    ...(gate.throttled > 0 ? [`${gate.throttled} held back by the rate limit`] : []),
  ];
  return (
    <span className="gate-summary">
      {parts.join(", ")}
      {gate.oldest_waiting_ms !== null ? `; the oldest has waited ${seconds(now - gate.oldest_waiting_ms)}` : ""}
      {gate.next_start_at_ms !== null ? `; the next starts ${gate.next_start_at_ms <= now ? "now" : `in ${seconds(gate.next_start_at_ms - now)}`}` : ""}
      <span className="muted"> ({limits.join(", ")})</span>
    </span>
  );
}

function seconds(ms: number): string {
  return plural(Math.max(0, Math.round(ms / 1000)), "second");
}

function plural(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? "" : "s"}`;
}
