import type { ReactNode } from "react";
import { FormField } from "../FormField";
import { Markdown } from "../Markdown";
import { AppAccountField } from "./AppAccountField";
import { ArrayInput } from "./ArrayInput";
import { AsyncOptionsSelect } from "./AsyncOptionsSelect";
import { encodeOption, optionLabel, optionValue } from "./draft-values";
import { labelOf, shapeOf } from "./prop-kinds";
import { TimerInput } from "./TimerInput";
import type { ConfigurableProp, DraftValue, LoadOptions, TimerDraft } from "./types";

export interface PropFieldProps {
  prop: ConfigurableProp;
  value: DraftValue | undefined;
  onChange: (value: DraftValue | undefined) => void;
  error?: string | undefined;
  /** For async options: how to load them, the component's identity, and the earlier props' values. */
  loadOptions?: LoadOptions | undefined;
  optionsKey: string;
  earlier: Record<string, unknown>;
  disabled?: boolean | undefined;
}

/** One prop of the form: its label, Markdown description, the input its type calls for, and its error. */
export function PropField({ prop, value, onChange, error, loadOptions, optionsKey, earlier, disabled }: PropFieldProps) {
  const shape = shapeOf(prop);
  const label = labelOf(prop);
  const isDisabled = disabled || prop.disabled === true;
  const required = !prop.optional && prop.default === undefined;
  const description = describe(prop);
  return (
    <FormField label={label} required={required} error={error} description={description}>
      {(ids) => {
        const common = { id: ids.id, "aria-describedby": ids.describedBy, "aria-invalid": ids.invalid, disabled: isDisabled };
        if (shape.kind === "app") {
          return (
            <AppAccountField
              id={ids.id}
              describedBy={ids.describedBy}
              invalid={ids.invalid}
              app={prop.app ?? ""}
              value={typeof value === "string" ? value : undefined}
              onChange={onChange}
              disabled={isDisabled}
            />
          );
        }
        if (prop.remoteOptions) {
          if (!loadOptions) return <p className="muted">This prop's options come from its code; they can be loaded once the component is saved.</p>;
          return (
            <AsyncOptionsSelect
              id={ids.id}
              describedBy={ids.describedBy}
              invalid={ids.invalid}
              label={label}
              prop={prop.name}
              optionsKey={optionsKey}
              earlier={earlier}
              loadOptions={loadOptions}
              multiple={shape.isArray}
              value={value as string | string[] | undefined}
              onChange={onChange}
              disabled={isDisabled}
            />
          );
        }
        if (prop.options) {
          const picked = value === undefined ? [] : Array.isArray(value) ? value : [String(value)];
          return (
            <select
              {...common}
              multiple={shape.isArray}
              value={shape.isArray ? picked : (picked[0] ?? "")}
              onChange={(event) => {
                if (shape.isArray) onChange(Array.from(event.target.selectedOptions, (option) => option.value));
                else onChange(event.target.value === "" ? undefined : event.target.value);
              }}
            >
              {shape.isArray ? null : <option value="">Choose…</option>}
              {prop.options.map((option) => {
                const encoded = encodeOption(optionValue(option));
                return (
                  <option key={encoded} value={encoded}>
                    {optionLabel(option)}
                  </option>
                );
              })}
            </select>
          );
        }
        if (shape.kind === "timer") {
          return <TimerInput id={ids.id} describedBy={ids.describedBy} invalid={ids.invalid} label={label} value={value as TimerDraft} onChange={onChange} disabled={isDisabled} />;
        }
        if (shape.isArray) {
          const inputType = prop.secret ? "password" : shape.kind === "integer" ? "number" : "text";
          return (
            <ArrayInput
              id={ids.id}
              describedBy={ids.describedBy}
              invalid={ids.invalid}
              label={label}
              value={Array.isArray(value) ? value : []}
              onChange={onChange}
              inputType={inputType}
              disabled={isDisabled}
            />
          );
        }
        switch (shape.kind) {
          case "boolean":
            return <input {...common} type="checkbox" className="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} />;
          case "integer":
            return (
              <input {...common} type="number" inputMode="numeric" step={1} min={prop.min} max={prop.max} value={textOf(value)} onChange={(event) => onChange(event.target.value)} />
            );
          case "json":
            return (
              <textarea
                {...common}
                className="mono"
                rows={4}
                spellCheck={false}
                placeholder={prop.type === "any" ? '"text", 42, [1, 2] or {"key": "value"}' : '{"key": "value"}'}
                value={textOf(value)}
                onChange={(event) => onChange(event.target.value)}
              />
            );
          default:
            // string and data_store: a secret is typed into a password field and never shown again.
            return (
              <input
                {...common}
                type={prop.secret ? "password" : "text"}
                autoComplete={prop.secret ? "new-password" : "off"}
                spellCheck={prop.secret ? false : undefined}
                placeholder={shape.kind === "data_store" ? "The name of a data store" : undefined}
                value={textOf(value)}
                onChange={(event) => onChange(event.target.value)}
              />
            );
        }
      }}
    </FormField>
  );
}

function textOf(value: DraftValue | undefined): string {
  return typeof value === "string" ? value : "";
}

/** The author's description (sanitized Markdown), and the limits the form checks, said up front. */
function describe(prop: ConfigurableProp): ReactNode {
  const limits = [prop.min !== undefined ? `at least ${prop.min}` : null, prop.max !== undefined ? `at most ${prop.max}` : null].filter(Boolean).join(", ");
  const notes = [limits ? `A whole number, ${limits}.` : null, prop.secret ? "Secret: stored encrypted, never shown again." : null, prop.type === "app" ? `One of your connected ${prop.app ?? ""} accounts.` : null, prop.optional ? "Optional." : null].filter(Boolean).join(" ");
  if (!prop.description && !notes) return null;
  return (
    <>
      {prop.description ? <Markdown text={prop.description} /> : null}
      {notes ? <span className="prop-notes">{notes}</span> : null}
    </>
  );
}
