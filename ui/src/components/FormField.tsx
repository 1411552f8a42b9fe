import { useId, type ReactNode } from "react";

export interface FormFieldProps {
  label: ReactNode;
  /** The API's (or the form's own) message for this field; shown under it and tied to the input for screen readers. */
  error?: string | null | undefined;
  /** Help under the label (plain text or a <Markdown>). */
  description?: ReactNode;
  required?: boolean;
  /** Renders the input, given the ids to put on it. */
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ReactNode;
}

/**
 * One labelled form field with its description and error.
 * `<FormField label="Name" error={fieldError(mutation.error, "name")}>{(f) => <input id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} />}</FormField>`
 */
export function FormField({ label, error, description, required, children }: FormFieldProps) {
  const id = useId();
  const descriptionId = `${id}-description`;
  const errorId = `${id}-error`;
  const describedBy = [description ? descriptionId : null, error ? errorId : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className={error ? "field has-error" : "field"}>
      <label htmlFor={id}>
        {label}
        {required ? <span className="required" aria-hidden="true"> *</span> : null}
      </label>
      {description ? (
        <div id={descriptionId} className="field-description">
          {description}
        </div>
      ) : null}
      {children({ id, describedBy, invalid: Boolean(error) })}
      {error ? (
        <p id={errorId} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
