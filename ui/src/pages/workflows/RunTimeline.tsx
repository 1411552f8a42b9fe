import type { RunView } from "./types";
import { formatDuration } from "./format";

/**
 * The steps of a run as bars on one time axis: where each started after the
 * run did, and how long it took. A list (not a chart) so that it reads aloud
 * as "step, status, offset, duration".
 */
export function RunTimeline({ run }: { run: RunView }) {
  const total = Math.max(1, run.duration_ms, ...run.steps.map((step) => offsetOf(run, step.started_at_ms) + step.duration_ms));
  return (
    <ol className="run-timeline" aria-label="Timeline of the steps">
      {run.steps.map((step) => {
        const offset = offsetOf(run, step.started_at_ms);
        const left = (offset / total) * 100;
        const width = Math.max(0.75, (step.duration_ms / total) * 100);
        return (
          <li key={step.id} className="timeline-row">
            <a className="timeline-name" href={`#step-${step.id}`}>
              {step.name}
            </a>
            <div className="timeline-track" aria-hidden="true">
              <div className={`timeline-bar bar-${step.status.replace(/[^a-z]/g, "")}`} style={{ marginLeft: `${Math.min(left, 99.25)}%`, width: `${Math.min(width, 100 - Math.min(left, 99.25))}%` }} />
            </div>
            <span className="timeline-duration">
              {formatDuration(step.duration_ms)}
              <span className="visually-hidden">
                {step.started_at_ms === null ? ", did not start" : `, starting ${formatDuration(offset)} into the run`}, {step.status}
              </span>
            </span>
          </li>
        );
      })}
    </ol>
  );
}

function offsetOf(run: RunView, startedAtMs: number | null): number {
  return startedAtMs === null ? 0 : Math.max(0, startedAtMs - run.started_at_ms);
}
