import { JsonTree } from "../../components/JsonTree";
import { RelativeTime } from "../../components/RelativeTime";
import { formatDuration } from "./format";
import { RunTimeline } from "./RunTimeline";
import { RunWait } from "./RunWait";
import { StatusBadge } from "./StatusBadge";
import type { RunStep, RunView } from "./types";

/**
 * Everything a run recorded: status, the exit reason or the error with its
 * stack, a timeline of the steps, then each step's return value, exports,
 * summary, logs and sends, and the trigger event. All values render as text.
 */
export function RunDetails({ run, headingLevel = 2 }: { run: RunView; headingLevel?: 2 | 3 }) {
  const H = headingLevel === 2 ? "h2" : "h3";
  const failedStep = run.error ? run.steps.find((step) => step.id === run.error?.cellId || step.status === "error") : undefined;
  return (
    <div className="run-details">
      <dl className="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={run.status} />
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <RelativeTime value={run.started_at_ms} />
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(run.duration_ms)}</dd>
        </div>
        {run.replay_of ? (
          <div>
            <dt>Replay of</dt>
            <dd className="mono">{run.replay_of}</dd>
          </div>
        ) : null}
        {run.workflow_version !== null ? (
          <div>
            <dt>Version</dt>
            <dd>{run.workflow_version}</dd>
          </div>
        ) : null}
      </dl>

      <RunWait run={run} />

      {run.attempts.length > 0 ? <RunAttempts run={run} /> : null}

      {run.exit_reason !== null || run.status === "exited" ? (
        <p className="exit-reason">
          <strong>Ended early with $.flow.exit: </strong>
          {run.exit_reason ? <span>{run.exit_reason}</span> : <span className="muted">no reason given</span>}
        </p>
      ) : null}

      {run.error ? (
        <section className="run-error" aria-label="Error">
          <H>
            Error{failedStep ? ` in step ${failedStep.name}` : ""}: {run.error.name || run.error.code}
          </H>
          <p className="error-message">{run.error.msg}</p>
          {run.error.stack ? (
            <details open>
              <summary>Stack</summary>
              <pre className="stack">{run.error.stack}</pre>
            </details>
          ) : null}
        </section>
      ) : null}

      <H>Timeline</H>
      {run.steps.length === 0 ? <p className="muted">This run recorded no steps.</p> : <RunTimeline run={run} />}

      {run.steps.map((step) => (
        <StepResult key={step.id} step={step} H={H} />
      ))}

      <section aria-label="Trigger event">
        <H>Trigger event</H>
        <JsonTree value={run.trigger.event} label="The trigger event" />
      </section>
    </div>
  );
}

function StepResult({ step, H }: { step: RunStep; H: "h2" | "h3" }) {
  const Sub = H === "h2" ? "h3" : "h4";
  const exports = Object.entries(step.exports).filter(([name]) => name !== "$summary");
  return (
    <section className="step-result card" id={`step-${step.id}`} aria-label={`Step ${step.name}`}>
      <H className="step-result-title">
        <span className="mono">{step.name}</span> <StatusBadge status={step.status} /> <span className="muted">{formatDuration(step.duration_ms)}</span>
        {step.reused ? <span className="muted"> (reused from the failed run, not run again)</span> : null}
      </H>
      {step.summary ? (
        <p className="step-summary">
          <span className="muted">$summary: </span>
          {step.summary}
        </p>
      ) : null}
      <Sub>Return value</Sub>
      {step.$return_value === undefined ? <p className="muted">Nothing returned.</p> : <JsonTree value={step.$return_value} label={`Return value of ${step.name}`} />}
      {exports.length > 0 ? (
        <>
          <Sub>Exports</Sub>
          <JsonTree value={Object.fromEntries(exports)} label={`Exports of ${step.name}`} />
        </>
      ) : null}
      {step.logs.length > 0 ? (
        <>
          <Sub>Logs</Sub>
          <pre className="step-logs">
            {step.logs.map((log, index) => (
              <span key={index} className={log.stream === "stderr" ? "log-stderr" : undefined}>
                {log.text}
                {log.text.endsWith("\n") ? "" : "\n"}
              </span>
            ))}
          </pre>
        </>
      ) : null}
      {step.sends.length > 0 ? (
        <>
          <Sub>Sends</Sub>
          <ul className="sends">
            {step.sends.map((send, index) => (
              <li key={index}>
                <span className="mono">$.send.{send.destination}</span> {send.target} <span className="muted">({send.status})</span>
                {send.detail ? <span className="muted"> — {send.detail}</span> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

/**
 * The failed tries of a run's steps that have retries: which try, its error,
 * and what came of it; while the run waits, when its next try is due.
 */
function RunAttempts({ run }: { run: RunView }) {
  return (
    <section className="run-attempts" aria-label="Attempts">
      {run.status === "retrying" && run.next_attempt_at_ms !== null ? (
        <p>
          <strong>Waiting to retry:</strong> the next try is <RelativeTime value={run.next_attempt_at_ms} due />.
        </p>
      ) : null}
      <ol>
        {run.attempts.map((tried) => (
          <li key={`${tried.step_id}-${tried.attempt}`}>
            Try {tried.attempt} of step <span className="mono">{tried.step_name}</span> failed <RelativeTime value={tried.failed_at_ms} />: {tried.code}: {tried.msg}{" "}
            <span className="muted">{tried.will_retry ? "(tried again)" : "(not tried again)"}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
