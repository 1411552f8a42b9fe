import { useQuery } from "@tanstack/react-query";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { listSources } from "./api";
import type { TriggerDraft, TriggerKind } from "./draft";
import { messageAt, type Problem } from "./problems";

const KINDS: Array<{ kind: TriggerKind; label: string; hint: string }> = [
  { kind: "http", label: "HTTP request", hint: "A URL of its own; each request is an event." },
  { kind: "timer", label: "Timer", hint: "Every so many seconds, or on a cron schedule." },
  { kind: "source", label: "Another source's events", hint: "Runs on each event of one of your sources." },
  { kind: "manual", label: "Manual", hint: "Runs only when you run it (and on what it subscribes to)." },
];

export interface TriggerEditorProps {
  trigger: TriggerDraft;
  /** The saved trigger is a source component of its own, which this form does not edit (kept as it is). */
  hasComponentTrigger: boolean;
  endpointUrl: string | null;
  problem: Problem | null;
  onChange: (trigger: TriggerDraft) => void;
}

/** What starts the workflow: HTTP (and how the caller is answered), a timer, a source's events, or nothing but "run now". */
export function TriggerEditor({ trigger, hasComponentTrigger, endpointUrl, problem, onChange }: TriggerEditorProps) {
  const sources = useQuery({ queryKey: ["sources", "all"], queryFn: ({ signal }) => listSources(signal), enabled: trigger.kind === "source" });
  const kinds = hasComponentTrigger ? [...KINDS, { kind: "component" as const, label: "Its own source component", hint: "Kept as it is; change it with the CLI or the API." }] : KINDS;
  const generalError = problem && (problem.field === "trigger" || problem.field === "trigger.type" || problem.field === "respond") ? problem.message : null;
  return (
    <fieldset className="trigger-editor card">
      <legend>Trigger</legend>
      <div className="trigger-kinds">
        {kinds.map((item) => (
          <label key={item.kind} className="choice">
            <input type="radio" name="trigger-kind" value={item.kind} checked={trigger.kind === item.kind} onChange={() => onChange({ ...trigger, kind: item.kind })} />
            <span>
              <strong>{item.label}</strong>
              <span className="muted"> — {item.hint}</span>
            </span>
          </label>
        ))}
      </div>
      {generalError ? (
        <p className="field-error" role="alert">
          {generalError}
        </p>
      ) : null}

      {trigger.kind === "http" ? (
        <>
          {endpointUrl ? (
            <p>
              Endpoint: <code className="endpoint-url">{endpointUrl}</code>
            </p>
          ) : (
            <p className="muted">The endpoint URL is made when you save.</p>
          )}
          <FormField label="Answer the caller">
            {(f) => (
              <select id={f.id} value={trigger.respond} onChange={(event) => onChange({ ...trigger, respond: event.target.value === "workflow" ? "workflow" : "immediately" })}>
                <option value="immediately">Immediately, with 200 (the run goes on after)</option>
                <option value="workflow">From the workflow, with $.respond</option>
              </select>
            )}
          </FormField>
        </>
      ) : null}

      {trigger.kind === "timer" ? (
        <>
          <div className="segmented" role="radiogroup" aria-label="Schedule">
            <label>
              <input type="radio" name="timer-mode" checked={trigger.timerMode === "interval"} onChange={() => onChange({ ...trigger, timerMode: "interval" })} /> Interval
            </label>
            <label>
              <input type="radio" name="timer-mode" checked={trigger.timerMode === "cron"} onChange={() => onChange({ ...trigger, timerMode: "cron" })} /> Cron
            </label>
          </div>
          {trigger.timerMode === "interval" ? (
            <FormField label="Every (seconds)" error={messageAt(problem, "trigger.intervalSeconds")} required>
              {(f) => (
                <input id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} type="number" min={1} step={1} inputMode="numeric" value={trigger.intervalSeconds} onChange={(event) => onChange({ ...trigger, intervalSeconds: event.target.value })} />
              )}
            </FormField>
          ) : (
            <FormField label="Cron expression" description="Five fields, in UTC: minute hour day-of-month month day-of-week, like 0 9 * * 1 (Mondays at 09:00)." error={messageAt(problem, "trigger.cron")} required>
              {(f) => <input id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} className="mono" spellCheck={false} value={trigger.cron} onChange={(event) => onChange({ ...trigger, cron: event.target.value })} />}
            </FormField>
          )}
        </>
      ) : null}

      {trigger.kind === "source" ? (
        sources.isError ? (
          <ErrorMessage error={sources.error} title="Could not load your sources." />
        ) : (
          <FormField label="Source" error={messageAt(problem, "trigger.source_id")} required>
            {(f) => (
              <select id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} value={trigger.sourceId} onChange={(event) => onChange({ ...trigger, sourceId: event.target.value })}>
                <option value="">{sources.isPending ? "Loading your sources…" : sources.data?.length ? "Choose a source…" : "You have no sources yet"}</option>
                {(sources.data ?? []).map((source) => (
                  <option key={source.id} value={source.id}>
                    {source.name} ({source.id})
                  </option>
                ))}
                {trigger.sourceId && sources.data && !sources.data.some((source) => source.id === trigger.sourceId) ? <option value={trigger.sourceId}>{trigger.sourceId}</option> : null}
              </select>
            )}
          </FormField>
        )
      ) : null}
    </fieldset>
  );
}
