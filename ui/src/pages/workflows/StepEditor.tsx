import { CodeEditor } from "../../components/CodeEditor";
import { FormField } from "../../components/FormField";
import { ActionPicker } from "./ActionPicker";
import { ActionPropsEditor } from "./ActionPropsEditor";
import { stepCompletions } from "./completions";
import type { StepDraft } from "./draft";
import { messageAt, type Problem } from "./problems";

export interface StepEditorProps {
  step: StepDraft;
  index: number;
  count: number;
  earlierStepNames: string[];
  /** The save's problem, when it may name this step's fields. */
  problem: Problem | null;
  onChange: (step: StepDraft) => void;
  onMove: (to: number) => void;
  onRemove: () => void;
}

/** One step of the editor: its name, code or published action, props, and its place in the list. */
export function StepEditor({ step, index, count, earlierStepNames, problem, onChange, onMove, onRemove }: StepEditorProps) {
  const field = `steps[${index}]`;
  const position = `step ${index + 1}`;
  const ownError = problem?.field === field ? problem.message : null;
  return (
    <fieldset className={`step-editor card${messageAt(problem, field) ? " has-error" : ""}`}>
      <legend>
        Step {index + 1}: <span className="mono">{step.name || "(unnamed)"}</span>
      </legend>
      <div className="step-toolbar">
        <button type="button" onClick={() => onMove(index - 1)} disabled={index === 0} aria-label={`Move ${position} up`}>
          ↑ Up
        </button>
        <button type="button" onClick={() => onMove(index + 1)} disabled={index === count - 1} aria-label={`Move ${position} down`}>
          ↓ Down
        </button>
        <button type="button" className="danger-text" onClick={onRemove} aria-label={`Remove ${position}`}>
          Remove
        </button>
      </div>
      {ownError ? (
        <p className="field-error" role="alert">
          {ownError}
        </p>
      ) : null}
      <FormField label={`Name of ${position}`} description={`Later steps read its results as steps.${step.name || "<name>"}.`} error={messageAt(problem, `${field}.name`)} required>
        {(f) => (
          <input
            id={f.id}
            aria-describedby={f.describedBy}
            aria-invalid={f.invalid}
            value={step.name}
            autoComplete="off"
            spellCheck={false}
            onChange={(event) => onChange({ ...step, name: event.target.value })}
          />
        )}
      </FormField>
      <div className="segmented" role="radiogroup" aria-label={`Kind of ${position}`}>
        <label>
          <input type="radio" name={`${step.uid}-kind`} checked={step.kind === "code"} onChange={() => onChange({ ...step, kind: "code", code: step.code || "" })} /> Code
        </label>
        <label>
          <input type="radio" name={`${step.uid}-kind`} checked={step.kind === "action"} onChange={() => onChange({ ...step, kind: "action" })} /> Published action
        </label>
      </div>
      {step.kind === "code" ? (
        <div className={messageAt(problem, `${field}.code`) ? "field has-error" : "field"}>
          <span className="field-label" id={`${step.uid}-code-label`}>
            Code of {position}
          </span>
          <CodeEditor
            // A new editor when the step moves, so its label and completions follow its place.
            key={`${step.uid}-${index}-${earlierStepNames.join(",")}`}
            ariaLabel={`Code of ${position}`}
            value={step.code}
            onChange={(code) => onChange({ ...step, code })}
            completions={stepCompletions(earlierStepNames)}
          />
          {messageAt(problem, `${field}.code`) ? <p className="field-error">{messageAt(problem, `${field}.code`)}</p> : null}
        </div>
      ) : (
        <>
          <ActionPicker
            stepLabel={position}
            actionKey={step.key}
            version={step.version}
            keyError={messageAt(problem, `${field}.key`)}
            // Another action takes other props: its form is made when they load.
            onChange={({ key, version }) => onChange({ ...step, key, version, ...(key === step.key ? {} : { actionForm: null, propsText: "{}" }) })}
          />
          <ActionPropsEditor step={step} index={index} problem={problem} onChange={onChange} />
        </>
      )}
      {step.kind === "code" ? (
        <FormField
          label={`Props of ${position} (JSON)`}
          description={
            <>
              Values for the step's props. A string may hold expressions such as <code>{"{{steps.trigger.event.body}}"}</code> or <code>{"{{process.env.NAME}}"}</code>.
            </>
          }
          error={messageAt(problem, `${field}.props`)}
        >
          {(f) => (
            <textarea
              id={f.id}
              aria-describedby={f.describedBy}
              aria-invalid={f.invalid}
              className="json-input"
              rows={Math.min(12, Math.max(3, step.propsText.split("\n").length))}
              spellCheck={false}
              value={step.propsText}
              onChange={(event) => onChange({ ...step, propsText: event.target.value })}
            />
          )}
        </FormField>
      ) : null}
    </fieldset>
  );
}
