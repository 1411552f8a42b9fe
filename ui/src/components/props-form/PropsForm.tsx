import { earlierValues } from "./draft-values";
import { labelOf, shapeOf } from "./prop-kinds";
import { PropField } from "./PropField";
import type { ConfigurableProp, LoadOptions, PropErrors, PropsDraft } from "./types";
import "./props-form.css";

export interface PropsFormProps {
  /** The component's `configurable_props`, as the API answers them (propDefinitions resolved). */
  props: ConfigurableProp[];
  /** What the user has entered so far; start from `initialDraft(props, given)`. */
  draft: PropsDraft;
  onChange: (draft: PropsDraft) => void;
  /** Messages by prop name: from `checkDraft` before sending, and `errorsFromApi` after. */
  errors?: PropErrors | undefined;
  /** Loads a page of a prop's async options; without it, such props say their options cannot be loaded yet. */
  loadOptions?: LoadOptions | undefined;
  /** Who the props belong to (a component id): async options are cached under it. */
  optionsKey: string;
  /** While the form's values are being sent. */
  disabled?: boolean | undefined;
}

/**
 * The inputs of a component's props, generated from its `configurable_props`:
 * one field per prop the user fills in, in declaration order; the props the
 * platform provides (HTTP endpoint, db) are listed, not asked; an app prop
 * picks one of the user's connected accounts. It is
 * controlled and renders no <form>: the page around it owns submitting.
 *
 * @example
 * const [draft, setDraft] = useState(() => initialDraft(component.configurable_props));
 * const [errors, setErrors] = useState<PropErrors>({});
 * const submit = () => {
 *   const checked = checkDraft(component.configurable_props, draft);
 *   setErrors(checked.errors);
 *   if (Object.keys(checked.errors).length === 0) deploy.mutate(checked.values);
 * };
 * <PropsForm props={component.configurable_props} draft={draft} onChange={setDraft}
 *   errors={{ ...errors, ...errorsFromApi(deploy.error, component.configurable_props) }} optionsKey={component.id} loadOptions={…} />
 */
export function PropsForm({ props, draft, onChange, errors = {}, loadOptions, optionsKey, disabled }: PropsFormProps) {
  const provided = props.filter((prop) => !prop.hidden && shapeOf(prop).kind === "provided");
  const inputs = props.filter((prop) => !prop.hidden && shapeOf(prop).kind !== "provided");
  return (
    <div className="props-form">
      {inputs.length === 0 ? <p className="muted">This component has nothing to configure.</p> : null}
      {inputs.map((prop) => (
        <PropField
          key={prop.name}
          prop={prop}
          value={draft[prop.name]}
          onChange={(value) => onChange({ ...draft, [prop.name]: value })}
          error={errors[prop.name]}
          loadOptions={loadOptions}
          optionsKey={optionsKey}
          earlier={prop.remoteOptions ? earlierValues(props, draft, prop.name) : {}}
          disabled={disabled}
        />
      ))}
      {provided.length > 0 ? (
        <div className="provided-props">
          <p className="muted">Provided by Runnel, nothing to fill in:</p>
          <ul>
            {provided.map((prop) => (
              <li key={prop.name}>
                <strong>{labelOf(prop)}</strong> <span className="muted">{providedText(prop)}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}

function providedText(prop: ConfigurableProp): string {
  if (prop.type === "$.interface.http") return "an HTTP endpoint, made when the source is deployed.";
  if (prop.type === "$.service.db") return "a key-value store kept across runs.";
  return `(${prop.type}).`;
}
