export interface ArrayInputProps {
  id: string;
  describedBy: string | undefined;
  invalid: boolean;
  label: string;
  /** One text per item ("true"/"false" for booleans, digits for integers). */
  value: string[];
  onChange: (value: string[]) => void;
  inputType: "text" | "number" | "password";
  disabled?: boolean | undefined;
}

/** A list prop (`string[]`, `integer[]`, `boolean[]`): one input per item, added and removed by buttons. */
export function ArrayInput({ id, describedBy, invalid, label, value, onChange, inputType, disabled }: ArrayInputProps) {
  // Always one input to type into, even for an empty list.
  const items = value.length > 0 ? value : [""];
  const set = (index: number, text: string) => onChange(items.map((item, at) => (at === index ? text : item)));
  const remove = (index: number) => onChange(items.filter((_, at) => at !== index));
  return (
    <div className="array-input">
      <ol>
        {items.map((item, index) => (
          // Items have no identity but their place; the list is short and edited in place.
          <li key={index}>
            <input
              id={index === 0 ? id : undefined}
              aria-label={index === 0 ? undefined : `${label}, item ${index + 1}`}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              type={inputType}
              autoComplete={inputType === "password" ? "new-password" : "off"}
              value={item}
              disabled={disabled}
              onChange={(event) => set(index, event.target.value)}
            />
            <button type="button" onClick={() => remove(index)} disabled={disabled || items.length === 1} aria-label={`Remove item ${index + 1} of ${label}`}>
              Remove
            </button>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => onChange([...items, ""])} disabled={disabled} aria-label={`Add an item to ${label}`}>
        Add an item
      </button>
    </div>
  );
}
