import { checkDraft, initialDraft, type CheckedProps, type ConfigurableProp, type PropErrors, type PropsDraft } from "../../components/props-form";

/**
 * A published action's props as a workflow step edits them. A step's value
 * may be a `{{ }}` expression evaluated at run time (the API checks the
 * evaluated value against the prop: src/domain/step-prop-checks.ts), so
 * text holding `{{` is sent as typed, whatever the prop's type.
 */

const HOLDS_EXPRESSION = /\{\{/;

/**
 * The props as the step's form shows them: a whole number is typed into a
 * text field (a number field takes no `{{ }}`); a secret the step has
 * already may be left empty to keep it (the API keeps a secret a save leaves out).
 */
export function formProps(props: ConfigurableProp[], saved: Record<string, unknown>): ConfigurableProp[] {
  return props.map((prop) => {
    let shown = prop;
    if (prop.type === "integer") {
      const limits = [prop.min !== undefined ? `at least ${prop.min}` : null, prop.max !== undefined ? `at most ${prop.max}` : null].filter(Boolean).join(" and ");
      const note = `A whole number${limits ? ` (${limits})` : ""}, or an expression such as {{steps.trigger.event.body.count}}.`;
      shown = { ...shown, type: "string", description: prop.description ? `${prop.description}\n\n${note}` : note };
    }
    if (prop.secret && Object.hasOwn(saved, prop.name)) {
      const keep = "Saved and hidden: leave empty to keep the current value, or type a new one.";
      shown = { ...shown, optional: true, description: shown.description ? `${shown.description}\n\n${keep}` : keep };
    }
    return shown;
  });
}

/** The form's starting state from a step's saved props; secret values are never put back in a field. */
export function stepDraft(props: ConfigurableProp[], saved: Record<string, unknown>): PropsDraft {
  const secret = new Set(props.filter((prop) => prop.secret).map((prop) => prop.name));
  return initialDraft(props, Object.fromEntries(Object.entries(saved).filter(([name]) => !secret.has(name))));
}

/**
 * The values to send, and what is wrong: each prop checked by its declared
 * rules (`declared`, not the form's text-field stand-ins), except text with
 * an expression in it, which the form cannot check and sends as typed.
 */
export function checkStepProps(declared: ConfigurableProp[], saved: Record<string, unknown>, draft: PropsDraft): CheckedProps {
  const rules = formProps(declared, saved).map((shown, index) => ({ ...(declared[index] as ConfigurableProp), optional: shown.optional }));
  const values: Record<string, unknown> = {};
  const errors: PropErrors = {};
  for (const prop of rules) {
    const checked = checkDraft([prop], { [prop.name]: draft[prop.name] });
    const typed = draft[prop.name];
    if (checked.errors[prop.name] && typeof typed === "string" && HOLDS_EXPRESSION.test(typed)) {
      values[prop.name] = typed;
      continue;
    }
    if (checked.errors[prop.name]) errors[prop.name] = checked.errors[prop.name];
    if (Object.hasOwn(checked.values, prop.name)) values[prop.name] = checked.values[prop.name];
  }
  return { values, errors };
}
