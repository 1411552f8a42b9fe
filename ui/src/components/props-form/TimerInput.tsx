import type { TimerDraft } from "./types";

export interface TimerInputProps {
  id: string;
  describedBy: string | undefined;
  invalid: boolean;
  label: string;
  value: TimerDraft;
  onChange: (value: TimerDraft) => void;
  disabled?: boolean | undefined;
}

/** The browser's time zone names, offered as the zone is typed. */
function TimeZoneList({ id }: { id: string }) {
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return (
    <datalist id={id}>
      {zones.map((zone) => (
        <option key={zone} value={zone} />
      ))}
    </datalist>
  );
}

/** A timer's schedule: every N seconds, or a cron expression in a time zone (`{ intervalSeconds }` or `{ cron, timezone }`). */
export function TimerInput({ id, describedBy, invalid, label, value, onChange, disabled }: TimerInputProps) {
  return (
    <div className="timer-input">
      <select id={id} aria-describedby={describedBy} value={value.mode} disabled={disabled} onChange={(event) => onChange({ ...value, mode: event.target.value === "cron" ? "cron" : "interval" })}>
        <option value="interval">Every N seconds</option>
        <option value="cron">On a cron schedule</option>
      </select>
      {value.mode === "interval" ? (
        <input
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          aria-label={`${label}: interval in seconds`}
          aria-invalid={invalid}
          placeholder="60"
          value={value.interval}
          disabled={disabled}
          onChange={(event) => onChange({ ...value, interval: event.target.value })}
        />
      ) : (
        <input
          type="text"
          aria-label={`${label}: cron expression`}
          aria-invalid={invalid}
          placeholder="0 * * * *"
          spellCheck={false}
          value={value.cron}
          disabled={disabled}
          onChange={(event) => onChange({ ...value, cron: event.target.value })}
        />
      )}
      {value.mode === "cron" ? (
        <input
          type="text"
          aria-label={`${label}: time zone`}
          aria-invalid={invalid}
          placeholder="UTC (or Europe/Paris, America/New_York…)"
          spellCheck={false}
          list={`${id}-zones`}
          value={value.timezone}
          disabled={disabled}
          onChange={(event) => onChange({ ...value, timezone: event.target.value })}
        />
      ) : null}
      {value.mode === "cron" ? <TimeZoneList id={`${id}-zones`} /> : null}
    </div>
  );
}
