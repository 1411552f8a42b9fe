import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";

/** A field of the request that Runnel accepted but does not act on, and why. */
export interface IgnoredField {
  field: string;
  message: string;
}

/**
 * Fields of the hosted API's create-workflow body that only mean something
 * there. Its clients send them on every create, so refusing them would break
 * those clients; they are dropped and named in the answer instead.
 */
const HOSTED_ONLY: Record<string, string> = {
  project_id: "project_id is ignored: Runnel has no projects; the workflow belongs to your workspace.",
  template_id: "template_id is ignored: Runnel has no workflow templates; give the trigger and steps in the body.",
  "settings.auto_deploy": "settings.auto_deploy is ignored: Runnel deploys every create and update at once.",
};

/**
 * The hosted API's create/update body mapped onto Runnel's own (the one
 * workflow-rules.ts checks): `settings.name` is `name`, a one-item
 * `triggers` is `trigger` (its `props` are `configured_props`), a step's
 * `namespace` is its `name`. Runnel's own fields pass unchanged; where both
 * forms are given they must agree. Pure: the body is not modified.
 */
export function fromDocumentedWorkflowBody(body: Record<string, unknown>): MappedWorkflowBody {
  const out: Record<string, unknown> = { ...body };
  const ignored: IgnoredField[] = [];
  // Runnel's field → the one the caller wrote, so that a later error names what they sent.
  const renamed: Array<[string, string]> = [];
  for (const field of ["project_id", "template_id"]) {
    if (field in out) {
      delete out[field];
      ignored.push({ field, message: HOSTED_ONLY[field]! });
    }
  }
  if (isRecord(out.settings)) {
    const { name, auto_deploy: autoDeploy, ...settings } = out.settings;
    out.settings = settings;
    if (autoDeploy !== undefined) ignored.push({ field: "settings.auto_deploy", message: HOSTED_ONLY["settings.auto_deploy"]! });
    if (name !== undefined) {
      if (out.name !== undefined && out.name !== name) {
        throw new ValidationError("settings.name", "name and settings.name are both given and differ; give the workflow's name once.");
      }
      if (out.name === undefined) renamed.push(["name", "settings.name"]);
      out.name = name;
    }
  }
  if (out.triggers !== undefined) {
    const trigger = singleTrigger(out.triggers, out.trigger !== undefined);
    delete out.triggers;
    if (trigger !== undefined) {
      out.trigger = trigger;
      renamed.push(["trigger.configured_props", "triggers[0].props"], ["trigger", "triggers[0]"]);
    }
  }
  if (Array.isArray(out.steps)) {
    out.steps = out.steps.map((step, index) => {
      if (isRecord(step) && step.namespace !== undefined && step.name === undefined) renamed.push([`steps[${index}].name`, `steps[${index}].namespace`]);
      return withName(step, `steps[${index}]`);
    });
  }
  return { body: out, ignored, renamed };
}

export interface MappedWorkflowBody {
  body: Record<string, unknown>;
  ignored: IgnoredField[];
  renamed: Array<[runnelField: string, givenField: string]>;
}

/**
 * A validation error of the mapped body, told in the fields the caller sent
 * (`triggers[0].intervalSeconds`, not `trigger.intervalSeconds`); any other
 * error as it is.
 */
export function inGivenTerms(error: unknown, renamed: MappedWorkflowBody["renamed"]): unknown {
  if (!(error instanceof ValidationError)) return error;
  for (const [runnel, given] of renamed) {
    if (error.field !== runnel && !error.field.startsWith(`${runnel}.`) && !error.field.startsWith(`${runnel}[`)) continue;
    const field = given + error.field.slice(runnel.length);
    const message = error.message.split(error.field).join(field);
    const { field: _field, ...details } = error.details ?? {};
    return new ValidationError(field, message, details);
  }
  return error;
}

function singleTrigger(triggers: unknown, alsoTrigger: boolean): unknown {
  if (alsoTrigger) throw new ValidationError("triggers", "Give trigger or triggers, not both: they are the same thing in two forms.");
  if (!Array.isArray(triggers)) throw new ValidationError("triggers", `triggers must be a list holding one trigger; got ${describeValue(triggers)}.`);
  if (triggers.length > 1) {
    throw new ValidationError(
      "triggers",
      `triggers holds ${triggers.length} triggers, and a Runnel workflow has one. Give one, and run the workflow on other emitters with POST /v1/subscriptions (emitter_id, listener_id).`,
    );
  }
  const [trigger] = triggers;
  // An empty list: no trigger given (on create, a workflow run only by subscriptions).
  if (trigger === undefined || !isRecord(trigger) || !("props" in trigger)) return trigger;
  const { props, ...rest } = trigger;
  if (rest.configured_props !== undefined) throw new ValidationError("triggers[0].props", "Give triggers[0].props or triggers[0].configured_props, not both.");
  return { ...rest, configured_props: props };
}

function withName(step: unknown, field: string): unknown {
  if (!isRecord(step) || step.namespace === undefined) {
    if (isRecord(step) && step.name === undefined) {
      throw new ValidationError(`${field}.name`, `${field}.name is missing: give the step a name (or namespace, the hosted API's word for it); later steps read its result as steps.<name>.`);
    }
    return step;
  }
  const { namespace, ...rest } = step;
  if (rest.name !== undefined && rest.name !== namespace) {
    throw new ValidationError(`${field}.namespace`, `${field}.name and ${field}.namespace are both given and differ; they are the same thing (the step's name): give one.`);
  }
  return { ...rest, name: namespace };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
