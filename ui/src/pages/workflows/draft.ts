import type { ConfigurableProp, PropsDraft } from "../../components/props-form";
import { checkStepProps } from "./step-props";
import type { WorkflowView } from "./types";

/**
 * The editor's working copy of a workflow, in the form's own terms (text as
 * typed), and its translation to and from the API's body
 * (src/api/schemas/workflows.ts, WorkflowBodySchema).
 */
export type TriggerKind = "http" | "timer" | "source" | "manual" | "component";

export interface TriggerDraft {
  kind: TriggerKind;
  /** HTTP: "immediately" (200 at once) or "workflow" (the caller waits for $.respond). */
  respond: "immediately" | "workflow";
  timerMode: "interval" | "cron";
  intervalSeconds: string;
  cron: string;
  sourceId: string;
}

export interface StepDraft {
  /** The form's own key for the step (React lists, moving); never sent. */
  uid: string;
  name: string;
  kind: "code" | "action";
  code: string;
  key: string;
  /** The version whose props the form shows (the API runs the newest release of the key). */
  version: string;
  /**
   * A code step's props as JSON text: values, and strings with {{ }}
   * expressions. For an action step, its saved props until its props form is loaded.
   */
  propsText: string;
  /** An action step's props form, once the action's props are loaded (null before: the saved props are sent unchanged). */
  actionForm: ActionForm | null;
}

export interface ActionForm {
  /** The action (key and version) whose props these are: another one needs a new form. */
  for: string;
  /** Its `configurable_props`. */
  props: ConfigurableProp[];
  /** The step's saved values: a secret among them may be left empty to keep it. */
  saved: Record<string, unknown>;
  draft: PropsDraft;
}

export interface WorkflowDraft {
  name: string;
  trigger: TriggerDraft;
  steps: StepDraft[];
}

export const NEW_STEP_CODE = `export default defineComponent({
  async run({ steps, $ }) {
    // steps.trigger.event is what started the run; return what later steps read.
    return steps.trigger.event;
  },
});
`;

let counter = 0;
function uid(): string {
  counter += 1;
  return `step-${counter}`;
}

export function newStep(existing: StepDraft[], kind: StepDraft["kind"] = "code"): StepDraft {
  const taken = new Set(existing.map((step) => step.name));
  let number = existing.length + 1;
  while (taken.has(`step_${number}`)) number += 1;
  return { uid: uid(), name: `step_${number}`, kind, code: kind === "code" ? NEW_STEP_CODE : "", key: "", version: "", propsText: "{}", actionForm: null };
}

export function emptyDraft(): WorkflowDraft {
  return {
    name: "",
    trigger: { kind: "http", respond: "immediately", timerMode: "interval", intervalSeconds: "3600", cron: "0 * * * *", sourceId: "" },
    steps: [newStep([])],
  };
}

/** A saved workflow as a draft; `codes` holds each code step's code by component id. */
export function draftFromWorkflow(workflow: WorkflowView, codes: Record<string, string>): WorkflowDraft {
  const documented = workflow.triggers[0];
  const type = workflow.trigger.type;
  const kind: TriggerKind = type === "none" ? "manual" : type === "http" || type === "timer" || type === "source" ? type : "component";
  const trigger: TriggerDraft = {
    ...emptyDraft().trigger,
    kind,
    respond: workflow.respond === "workflow" ? "workflow" : "immediately",
    sourceId: workflow.trigger.source_id ?? "",
  };
  if (documented?.cron) {
    trigger.timerMode = "cron";
    trigger.cron = documented.cron;
  } else if (documented?.interval_seconds) {
    trigger.intervalSeconds = String(documented.interval_seconds);
  }
  const steps = workflow.steps.map((step): StepDraft => {
    const isAction = step.key !== null;
    return {
      uid: uid(),
      name: step.name,
      kind: isAction ? "action" : "code",
      code: !isAction && step.component_id ? (codes[step.component_id] ?? "") : "",
      key: step.key ?? "",
      version: "",
      propsText: JSON.stringify(step.props, null, 2),
      actionForm: null,
    };
  });
  return { name: workflow.name, trigger, steps };
}

/** A problem found before sending, named by the same field paths the API uses. */
export class DraftError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The trigger as the API takes it; undefined for a manual one on create (no trigger at all). */
export function triggerBody(trigger: TriggerDraft): Record<string, unknown> | undefined {
  switch (trigger.kind) {
    case "http":
      return { type: "http" };
    case "timer":
      if (trigger.timerMode === "interval") {
        const seconds = Number(trigger.intervalSeconds);
        if (!Number.isInteger(seconds) || seconds < 1) throw new DraftError("trigger.intervalSeconds", "The interval must be a whole number of seconds, at least 1.");
        return { type: "timer", intervalSeconds: seconds };
      }
      if (!trigger.cron.trim()) throw new DraftError("trigger.cron", 'Give a cron expression, like "0 * * * *" (every hour).');
      return { type: "timer", cron: trigger.cron.trim() };
    case "source":
      if (!trigger.sourceId) throw new DraftError("trigger.source_id", "Pick the source whose events start this workflow.");
      return { source_id: trigger.sourceId };
    case "manual":
      return { type: "manual" };
    case "component":
      return undefined;
  }
}

function stepBody(step: StepDraft, index: number): Record<string, unknown> {
  if (step.kind === "action" && step.actionForm) {
    if (!step.key) throw new DraftError(`steps[${index}].key`, "Pick a published action for this step.");
    const checked = checkStepProps(step.actionForm.props, step.actionForm.saved, step.actionForm.draft);
    const wrong = Object.entries(checked.errors).find(([, message]) => message);
    if (wrong) throw new DraftError(`steps[${index}].props.${wrong[0]}`, wrong[1] as string);
    return { name: step.name, key: step.key, props: checked.values };
  }
  let props: unknown;
  try {
    props = step.propsText.trim() === "" ? {} : JSON.parse(step.propsText);
  } catch (error) {
    throw new DraftError(`steps[${index}].props`, `The props of step "${step.name}" are not valid JSON: ${(error as Error).message}`);
  }
  if (!props || typeof props !== "object" || Array.isArray(props)) throw new DraftError(`steps[${index}].props`, `The props of step "${step.name}" must be a JSON object, like {"channel": "{{steps.trigger.event.channel}}"}.`);
  if (step.kind === "action") {
    if (!step.key) throw new DraftError(`steps[${index}].key`, "Pick a published action for this step.");
    return { name: step.name, key: step.key, props };
  }
  return { name: step.name, code: step.code, props };
}

/**
 * The POST/PUT body. `original` is the saved workflow when editing: an
 * unchanged trigger is left out, so that the API keeps it as it is (its
 * endpoint URL above all), and a manual trigger is left out on create.
 */
export function workflowBody(draft: WorkflowDraft, original: WorkflowDraft | null): Record<string, unknown> {
  const body: Record<string, unknown> = { name: draft.name.trim(), steps: draft.steps.map(stepBody) };
  const triggerChanged = original === null || JSON.stringify(triggerBody(original.trigger)) !== JSON.stringify(triggerBody(draft.trigger)) || original.trigger.kind !== draft.trigger.kind;
  if (triggerChanged && !(original === null && draft.trigger.kind === "manual")) {
    const trigger = triggerBody(draft.trigger);
    if (trigger) body.trigger = trigger;
  }
  body.respond = draft.trigger.kind === "http" ? draft.trigger.respond : draft.trigger.kind === "component" || draft.trigger.kind === "source" ? (original?.trigger.respond ?? "immediately") : "immediately";
  return body;
}

/** The step index an API field path names (`steps[2].props.x` → 2), or null. */
export function stepIndexOf(field: string | null): number | null {
  const match = field ? /^steps\[(\d+)\]/.exec(field) : null;
  return match ? Number(match[1]) : null;
}

/** Moves the item at `from` to `to` (a copy). */
export function moved<T>(items: T[], from: number, to: number): T[] {
  if (to < 0 || to >= items.length) return items;
  const copy = [...items];
  const [item] = copy.splice(from, 1);
  copy.splice(to, 0, item as T);
  return copy;
}
