import type { ReplayChoice } from "./errors-api";

/**
 * Where a replay starts and whose code it runs, for every replay button of
 * the page: today's replay (the trigger, the current code) unless changed.
 */
export function ReplayOptions({ choice, onChange }: { choice: ReplayChoice; onChange: (choice: ReplayChoice) => void }) {
  return (
    <fieldset className="replay-options">
      <legend>Replay</legend>
      <label>
        Start from{" "}
        <select value={choice.from} onChange={(event) => onChange({ ...choice, from: event.target.value as ReplayChoice["from"] })}>
          <option value="trigger">the trigger (all steps again)</option>
          <option value="failed_step">the failed step (earlier steps reused, not run again)</option>
        </select>
      </label>
      <label>
        Code{" "}
        <select value={choice.with_code} onChange={(event) => onChange({ ...choice, with_code: event.target.value as ReplayChoice["with_code"] })}>
          <option value="current">the workflow's current code</option>
          <option value="failed_run">the code the failed run ran</option>
        </select>
      </label>
    </fieldset>
  );
}
