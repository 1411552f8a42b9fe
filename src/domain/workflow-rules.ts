import { explainCronProblem, explainTimeZoneProblem } from "./cron-expression.js";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import { ENV_NAME } from "./env-vars.js";
import { envNameOf, hasExpressions, parseTemplate } from "./expressions.js";
import { validateRetryPolicy, type RetryPolicy } from "./run-retries.js";
import { validateConcurrency, validateConcurrencyKey, validateRateLimit, type RateLimit } from "./run-gate.js";

/**
 * A workflow as the API and the file form describe it, checked: every error
 * names the path of the bad field (`steps[1].name`), so a person can find it.
 */
export interface WorkflowInput {
  name: string;
  trigger: TriggerInput;
  steps: StepInput[];
  /** "workflow": an HTTP caller waits for `$.respond`; "immediately": it gets 200 at once. */
  respond: "workflow" | "immediately";
  settings: WorkflowSettings;
}

export type TriggerInput =
  /** No trigger: the workflow runs on what it subscribes to (the error workflow, `$errors` listeners). */
  | { kind: "none" }
  | { kind: "http" }
  | { kind: "timer"; intervalSeconds: number }
  | { kind: "timer"; cron: string; timezone?: string }
  | { kind: "source"; sourceId: string }
  | { kind: "component"; code?: string; url?: string; key?: string; configuredProps: Record<string, unknown> };

export type StepInput = { name: string; props: Record<string, unknown>; /** The step's own retries: they override the workflow's. */ retries?: RetryPolicy } & ({ code: string; filename?: string } | { key: string });

export interface WorkflowSettings {
  /** Whether errors of this workflow go to the global error workflow (they are listed either way). */
  errorNotifications: boolean;
  /** Errors kept in `$errors` (the seed: the most recent 100). */
  errorRetention: number;
  /** Retries of a failed step (docs/workflows.md, "Retries"); none when left out. */
  retries?: RetryPolicy;
  /** Every failed attempt goes to `$errors` too, not only the last. */
  errorsOnEachAttempt?: boolean;
  /** Runs of the workflow at once (per concurrencyKey value, when given); unlimited when left out (docs/workflows.md, "Concurrency and order"). */
  concurrency?: number;
  /** The `{{ steps.trigger.event… }}` expression whose value picks the line a run waits in. */
  concurrencyKey?: string;
  /** At most `runs` runs start per `perSeconds`; the others wait. */
  rateLimit?: RateLimit;
}

const STEP_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function validateWorkflowInput(body: unknown): WorkflowInput {
  const input = record(body, "body");
  const name = text(input.name, "name");
  const steps = list(input.steps, "steps").map((step, index) => validateStep(step, `steps[${index}]`));
  const seen = new Map<string, number>();
  steps.forEach((step, index) => {
    const first = seen.get(step.name);
    if (first !== undefined) throw new ValidationError(`steps[${index}].name`, `Two steps are named "${step.name}" (steps[${first}] and steps[${index}]); step names must be unique.`);
    seen.set(step.name, index);
  });
  steps.forEach((step, index) => checkReferences(step, index, steps));
  const respond = input.respond ?? "immediately";
  if (respond !== "workflow" && respond !== "immediately") {
    throw new ValidationError("respond", `respond must be "workflow" (the HTTP caller waits for $.respond) or "immediately"; got ${describeValue(respond)}.`);
  }
  const trigger = input.trigger === undefined || input.trigger === null ? ({ kind: "none" } as const) : validateTrigger(input.trigger);
  if (respond === "workflow" && trigger.kind !== "http" && trigger.kind !== "component" && trigger.kind !== "source") {
    throw new ValidationError("respond", 'respond "workflow" needs a trigger that receives HTTP requests ({"type": "http"} or an HTTP source).');
  }
  return { name, trigger, steps, respond, settings: validateSettings(input.settings) };
}

function validateTrigger(value: unknown): TriggerInput {
  const trigger = record(value, "trigger");
  // Run only by hand (POST /workflows/<id>/runs) or by what it subscribes to: the same as no trigger.
  if (trigger.type === "manual") return { kind: "none" };
  if (trigger.type === "http") return { kind: "http" };
  if (trigger.type === "timer") {
    const timezone = triggerTimeZone(trigger);
    if (trigger.intervalSeconds !== undefined) {
      if (timezone !== undefined) throw new ValidationError("trigger.timezone", "trigger.timezone applies to a cron schedule only; an interval is the same in every zone. Give cron with it, or leave it out.");
      const seconds = trigger.intervalSeconds;
      if (typeof seconds !== "number" || !Number.isInteger(seconds) || seconds < 1) {
        throw new ValidationError("trigger.intervalSeconds", `trigger.intervalSeconds must be a whole number of seconds, at least 1; got ${describeValue(seconds)}.`);
      }
      return { kind: "timer", intervalSeconds: seconds };
    }
    if (typeof trigger.cron === "string" && trigger.cron.trim() !== "") {
      const problem = explainCronProblem(trigger.cron.trim());
      if (problem !== null) throw new ValidationError("trigger.cron", `trigger.cron: ${problem}`);
      return { kind: "timer", cron: trigger.cron.trim(), ...(timezone !== undefined ? { timezone } : {}) };
    }
    throw new ValidationError("trigger", 'A timer trigger needs intervalSeconds (like 60) or cron (like "0 * * * *").');
  }
  if (trigger.type !== undefined) {
    throw new ValidationError("trigger.type", `trigger.type must be "http", "timer" or "manual"; got ${describeValue(trigger.type)}. For a source, give source_id or its component instead.`);
  }
  if (typeof trigger.source_id === "string") {
    if (!trigger.source_id.startsWith("dc_")) throw new ValidationError("trigger.source_id", `trigger.source_id must be a deployed source's id (dc_…); got "${trigger.source_id}".`);
    return { kind: "source", sourceId: trigger.source_id };
  }
  const code = optionalText(trigger.component_code, "trigger.component_code");
  const url = optionalText(trigger.component_url, "trigger.component_url");
  const key = optionalText(trigger.key, "trigger.key");
  if (code === undefined && url === undefined && key === undefined) {
    throw new ValidationError("trigger", 'Give the trigger: {"type": "http"}, {"type": "timer", ...}, {"source_id": "dc_…"} or a source component (component_code, component_url or key).');
  }
  const configuredProps = trigger.configured_props === undefined ? {} : record(trigger.configured_props, "trigger.configured_props");
  return { kind: "component", ...(code !== undefined ? { code } : {}), ...(url !== undefined ? { url } : {}), ...(key !== undefined ? { key } : {}), configuredProps };
}

/** A timer trigger's zone (an IANA name), checked; undefined when it gives none (UTC). */
function triggerTimeZone(trigger: Record<string, unknown>): string | undefined {
  const zone = trigger.timezone;
  if (zone === undefined || zone === null) return undefined;
  if (typeof zone !== "string") throw new ValidationError("trigger.timezone", `trigger.timezone must be an IANA time zone name such as "Europe/Paris"; got ${describeValue(zone)}.`);
  const problem = explainTimeZoneProblem(zone);
  if (problem !== null) throw new ValidationError("trigger.timezone", `trigger.${problem}`);
  return zone.trim();
}

function validateStep(value: unknown, field: string): StepInput {
  const step = record(value, field);
  const name = text(step.name, `${field}.name`);
  if (!STEP_NAME.test(name) || name === "trigger") {
    throw new ValidationError(
      `${field}.name`,
      `Step name "${name}" must be a name usable in expressions (letters, digits and _, not starting with a digit, at most 64) and not "trigger".`,
    );
  }
  const props = step.props === undefined ? {} : record(step.props, `${field}.props`);
  const retries = step.retries === undefined || step.retries === null ? {} : { retries: validateRetryPolicy(step.retries, `${field}.retries`) };
  const hasCode = step.code !== undefined;
  const hasKey = step.key !== undefined;
  if (hasCode === hasKey) throw new ValidationError(field, `${field} needs either code (a code step) or key (a published action), not ${hasCode ? "both" : "neither"}.`);
  if (hasCode) {
    // The file the code came from (the CLI sends it), so that TypeScript and ES modules are read as such.
    const filename = optionalText(step.filename, `${field}.filename`);
    return { name, props, code: text(step.code, `${field}.code`), ...(filename !== undefined ? { filename } : {}), ...retries };
  }
  return { name, props, key: text(step.key, `${field}.key`), ...retries };
}

/** Expressions may read the trigger and the steps before this one, and the owner's environment variables (`process.env.NAME`). */
function checkReferences(step: StepInput, index: number, steps: StepInput[]): void {
  const earlier = new Set(["trigger", ...steps.slice(0, index).map((candidate) => candidate.name)]);
  const visit = (value: unknown, field: string): void => {
    if (typeof value === "string" && hasExpressions(value)) {
      let parts;
      try {
        parts = parseTemplate(value).parts;
      } catch (error) {
        throw new ValidationError(field, `The expression in ${field} cannot be read: ${(error as Error).message}.`);
      }
      for (const part of parts) {
        if (!("path" in part)) continue;
        if (part.path[0] === "process") {
          checkEnvReference(part, field);
          continue;
        }
        const [root, stepName] = part.path;
        if (root !== "steps" || typeof stepName !== "string") {
          throw new ValidationError(field, `The expression {{${part.source}}} in ${field} must start with steps.<step name> (like steps.trigger.event), or be process.env.<NAME> (an environment variable).`);
        }
        if (!earlier.has(stepName)) {
          throw new ValidationError(field, `The expression {{${part.source}}} in ${field} reads step "${stepName}", which does not run before this step.`);
        }
      }
    } else if (Array.isArray(value)) value.forEach((item, i) => visit(item, `${field}[${i}]`));
    else if (value && typeof value === "object") for (const [key, item] of Object.entries(value)) visit(item, `${field}.${key}`);
  };
  visit(step.props, `steps[${index}].props`);
}

/** `{{process.env.NAME}}` and nothing more: the value is text, with no fields to read. Whether NAME is set is known at run time. */
function checkEnvReference(part: { path: Array<string | number>; source: string }, field: string): void {
  const name = envNameOf(part.path);
  if (name === null || !ENV_NAME.test(name)) {
    throw new ValidationError(field, `The expression {{${part.source}}} in ${field} must be {{process.env.NAME}}, NAME an environment variable's name (letters, digits and _, not starting with a digit).`);
  }
}

function validateSettings(value: unknown): WorkflowSettings {
  const settings = value === undefined ? {} : record(value, "settings");
  const errorNotifications = settings.error_notifications ?? true;
  if (typeof errorNotifications !== "boolean") throw new ValidationError("settings.error_notifications", "settings.error_notifications must be true or false.");
  const errorRetention = settings.error_retention ?? 100;
  if (typeof errorRetention !== "number" || !Number.isInteger(errorRetention) || errorRetention < 1 || errorRetention > 10_000) {
    throw new ValidationError("settings.error_retention", `settings.error_retention must be a whole number from 1 to 10000; got ${describeValue(errorRetention)}.`);
  }
  const retries = settings.retries === undefined || settings.retries === null ? {} : { retries: validateRetryPolicy(settings.retries, "settings.retries") };
  const eachAttempt = settings.errors_on_each_attempt ?? false;
  if (typeof eachAttempt !== "boolean") throw new ValidationError("settings.errors_on_each_attempt", `settings.errors_on_each_attempt must be true or false; got ${describeValue(eachAttempt)}.`);
  // Left out when off, so that workflows without retries keep the settings they always had.
  return { errorNotifications, errorRetention, ...retries, ...(eachAttempt ? { errorsOnEachAttempt: true } : {}), ...gateSettings(settings) };
}

/** settings.concurrency, concurrency_key and rate_limit, checked; left out when absent (as retries are). */
function gateSettings(settings: Record<string, unknown>): Pick<WorkflowSettings, "concurrency" | "concurrencyKey" | "rateLimit"> {
  const absent = (value: unknown) => value === undefined || value === null;
  const concurrency = absent(settings.concurrency) ? undefined : validateConcurrency(settings.concurrency);
  const key = absent(settings.concurrency_key) ? undefined : validateConcurrencyKey(settings.concurrency_key, concurrency);
  const rateLimit = absent(settings.rate_limit) ? undefined : validateRateLimit(settings.rate_limit);
  return { ...(concurrency !== undefined ? { concurrency } : {}), ...(key !== undefined ? { concurrencyKey: key } : {}), ...(rateLimit ? { rateLimit } : {}) };
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new ValidationError(field, `${field} must be an object; got ${describeValue(value)}.`);
  return value as Record<string, unknown>;
}

function list(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new ValidationError(field, `${field} must be a list of steps; got ${describeValue(value)}.`);
  return value;
}

function text(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new ValidationError(field, `${field} must be a non-empty string; got ${describeValue(value)}.`);
  return value;
}

function optionalText(value: unknown, field: string): string | undefined {
  return value === undefined ? undefined : text(value, field);
}
