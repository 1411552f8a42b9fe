import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo } from "react";
import { PropsForm, type ConfigurableProp, type PropErrors } from "../../components/props-form";
import { getPublished } from "./api";
import type { StepDraft } from "./draft";
import { messageAt, type Problem } from "./problems";
import { checkStepProps, formProps, stepDraft } from "./step-props";

export interface ActionPropsEditorProps {
  step: StepDraft;
  index: number;
  problem: Problem | null;
  onChange: (step: StepDraft) => void;
}

/**
 * The props form of an action step, generated from the published action's
 * `configurable_props`. Its values may be `{{ }}` expressions (sent as typed).
 * The form is made when the action's props arrive, from the step's saved
 * values, and again when another action or version is picked.
 */
export function ActionPropsEditor({ step, index, problem, onChange }: ActionPropsEditorProps) {
  // The same query as the ActionPicker's: answered once for both.
  const published = useQuery({
    queryKey: ["registry", step.key, step.version],
    queryFn: ({ signal }) => getPublished(step.key, step.version || undefined, signal),
    enabled: step.key !== "",
    staleTime: 60_000,
  });
  const component = published.data?.component;
  const loadedFor = component ? `${step.key}@${component.version}` : null;

  useEffect(() => {
    if (!component || loadedFor === null || step.actionForm?.for === loadedFor) return;
    const props = component.configurable_props as unknown as ConfigurableProp[];
    // Values carry over from the saved step, or from the form of the version shown before.
    const previous = step.actionForm;
    const saved = previous ? checkStepProps(previous.props, previous.saved, previous.draft).values : savedProps(step.propsText);
    const kept = previous ? previous.saved : saved;
    onChange({ ...step, actionForm: { for: loadedFor, props, saved: kept, draft: stepDraft(props, saved) } });
    // Only a newly loaded action makes a new form; the step's other changes do not.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [loadedFor]);

  const form = step.actionForm;
  const shown = useMemo(() => (form ? formProps(form.props, form.saved) : []), [form]);
  if (!form || form.for !== loadedFor) return null;
  const errors: PropErrors = {};
  for (const prop of form.props) {
    const message = messageAt(problem, `steps[${index}].props.${prop.name}`);
    if (message) errors[prop.name] = message;
  }
  return (
    <div className="action-props">
      <p className="muted">
        A value may be an expression such as <code>{"{{steps.trigger.event.body}}"}</code> or <code>{"{{process.env.NAME}}"}</code>, evaluated when the step runs.
      </p>
      <PropsForm
        props={shown}
        draft={form.draft}
        onChange={(draft) => onChange({ ...step, actionForm: { ...form, draft } })}
        errors={errors}
        optionsKey={`${step.key}@${form.for}`}
      />
    </div>
  );
}

function savedProps(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
