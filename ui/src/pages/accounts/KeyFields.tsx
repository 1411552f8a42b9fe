import { FormField } from "../../components/FormField";
import type { AppView } from "../../api/types";

export type KeyField = NonNullable<AppView["auth"]["fields"]>[number];

/**
 * The fields of a key-based app. Secret ones are password inputs: typed,
 * sent once, never shown again (the API never answers them).
 */
export function KeyFields({ fields, values, onChange, errors = {} }: { fields: KeyField[]; values: Record<string, string>; onChange: (values: Record<string, string>) => void; errors?: Record<string, string | undefined> }) {
  return (
    <>
      {fields.map((field) => (
        <FormField key={field.name} label={field.label} required={!field.optional} error={errors[field.name]} description={field.secret ? "Secret: stored encrypted, never shown again." : undefined}>
          {(ids) => (
            <input
              id={ids.id}
              aria-describedby={ids.describedBy}
              aria-invalid={ids.invalid}
              type={field.secret ? "password" : "text"}
              autoComplete={field.secret ? "new-password" : "off"}
              spellCheck={false}
              value={values[field.name] ?? ""}
              onChange={(event) => onChange({ ...values, [field.name]: event.target.value })}
            />
          )}
        </FormField>
      ))}
    </>
  );
}

/** The fields left empty that the app requires, as messages by field name. */
export function missingFields(fields: KeyField[], values: Record<string, string>): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const field of fields) if (!field.optional && (values[field.name] ?? "").trim() === "") errors[field.name] = `Enter the ${field.label}.`;
  return errors;
}

/** Only the fields the user filled in. */
export function filledFields(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value.trim() !== ""));
}
