import { Buffer } from "node:buffer";
import type { ValidatedComponent } from "./component-rules.js";
import { appPropValueProblem, configuredAccountId } from "./app-accounts.js";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import { expressionShape, hasExpressions } from "./expressions.js";
import type { ValidatedProp } from "./prop-types.js";
import { checkPropValue, isAmongOptions, isPlainObject, normalizeTimer, optionsList } from "./prop-values.js";

/** SEED "Limits": a prop value is at most 64 KB. */
export const MAX_PROP_VALUE_BYTES = 64 * 1024;

/**
 * Where the values being checked sit: a source's `configured_props`, or a
 * workflow step's `steps[<i>].props` (then messages name the step first).
 */
export interface PropValuesPlace {
  /** The field errors name, before `.<prop>`. */
  field: string;
  /** The workflow step the values belong to. */
  step?: string | undefined;
}

const CONFIGURED_PROPS: PropValuesPlace = { field: "configured_props" };

/**
 * The values a user gives a component's props on deploy or update (a source's
 * configured props, a workflow step's props), checked against its declared
 * props; errors name `<place>.<prop>`. Returns the values to store, in
 * declaration order, defaults applied.
 *
 * A step's value may hold `{{ }}` expressions, known only at run time: an
 * expression alone is checked then (step-prop-checks.ts); text around one
 * makes a string, so the prop must take text; a list's items are checked one
 * by one, each as above.
 *
 * A null counts as not given, so a client can clear an optional prop.
 * Interface, service and app props are provided by the platform, not by
 * value, except a timer (its schedule) and a data store (the store's name).
 * Props returned by `additionalProps()` are not known here; when a component
 * has that method, names it does not declare pass through, size-checked only.
 */
export function validateConfiguredProps(component: ValidatedComponent, configured: Record<string, unknown>, place: PropValuesPlace = CONFIGURED_PROPS): Record<string, unknown> {
  if (!isPlainObject(configured)) {
    throw new ValidationError(place.field, `${ownerOf(place)}${place.field} must be an object of prop values by name; got ${describeValue(configured)}.`);
  }
  const declared = new Map(component.props.map((prop) => [prop.name, prop]));
  const extra: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(configured)) {
    checkSize(name, value, place);
    if (declared.has(name)) continue;
    if (!component.hasAdditionalProps) {
      const known = component.props.map((prop) => prop.name).join(", ") || "none";
      throw propError(name, place, `${ownerOf(place)}Unknown prop "${name}"; ${place.step === undefined ? "this component's" : "its code's"} props are: ${known}.`);
    }
    if (value !== null && value !== undefined) extra[name] = value;
  }
  const out: Record<string, unknown> = {};
  for (const prop of component.props) {
    // Own properties only: a prop named "constructor" must not read Object.prototype's.
    const given = Object.hasOwn(configured, prop.name) ? configured[prop.name] : undefined;
    const value = configuredValue(prop, given ?? undefined, place);
    if (value !== undefined) out[prop.name] = value;
  }
  return { ...out, ...extra };
}

function configuredValue(prop: ValidatedProp, given: unknown, place: PropValuesPlace): unknown {
  const subject = subjectOf(prop.name, place);
  if (prop.baseType === "$.interface.timer") {
    const value = given ?? prop.default;
    if (value === undefined) return required(prop, "a timer: { intervalSeconds: 60 } or { cron: \"0 * * * *\" }", place);
    const timer = normalizeTimer(value);
    if ("error" in timer) throw propError(prop.name, place, `${place.step === undefined ? "Timer" : ownerOf(place) + "timer"} "${prop.name}" ${timer.error}`);
    return timer.value;
  }
  if (prop.baseType === "app") {
    // A connected account, or none (an app that needs no account, or one configured later); whose it is, the engine checks.
    if (given === undefined) return undefined;
    const problem = appPropValueProblem(given);
    if (problem !== null) throw propError(prop.name, place, `${subject} (app "${prop.app ?? "?"}") ${problem}`);
    return { authProvisionId: configuredAccountId(given) };
  }
  if (prop.kind !== "input" && prop.baseType !== "data_store") {
    if (given !== undefined) {
      throw propError(prop.name, place, `${subject} (${prop.type}) takes no value: the platform provides it. Leave it out of ${place.field}.`);
    }
    return undefined;
  }
  if (given === undefined) return prop.default ?? required(prop, what(prop), place);
  const problem = checkGivenValue(prop, given);
  if (problem !== null) throw propError(prop.name, place, `${subject} ${prop.secret ? withoutValue(problem) : problem}`);
  if (prop.options !== undefined) {
    // An item that is an expression is checked against the options at run time.
    const items = (prop.isArray ? (given as unknown[]) : [given]).filter((item) => !hasExpressions(item));
    const outside = items.find((item) => !isAmongOptions(item, prop.options ?? []));
    if (outside !== undefined) {
      if (prop.secret) throw propError(prop.name, place, `${subject}: the value given is not one of its options (it is secret, so neither is shown).`);
      throw propError(prop.name, place, `${subject}: ${JSON.stringify(outside)} is not one of its options (${optionsList(prop)}).`);
    }
  }
  return given;
}

/**
 * What is wrong with a given value, as far as it can be known now: an
 * expression alone is known only at run time; text with expressions inside is
 * a string; a list is checked item by item, each the same way.
 */
function checkGivenValue(prop: ValidatedProp, given: unknown): string | null {
  const shape = expressionShape(given);
  if (shape === "none") return checkPropValue(prop, given);
  if (shape === "whole") return null;
  if (shape === "text") {
    // Whatever the expressions give, the value will be text: fine wherever a string is (its options are checked when run).
    const asText = checkPropValue(prop, "text");
    if (asText === null) return null;
    return `${asText.replace(/;?\s*got [\s\S]*$/, "")}, but text with a {{ }} expression inside always makes a string. Use the expression alone ("{{steps.<step>.<path>}}") to pass a value of another type.`;
  }
  if (prop.isArray && Array.isArray(given)) {
    for (const [index, item] of given.entries()) {
      const problem = checkGivenValue({ ...prop, isArray: false }, item);
      if (problem !== null) return `item ${index} ${problem}`;
    }
    return null;
  }
  // Expressions deeper inside an object: its strings are unknown, its shape is not.
  return checkPropValue(prop, given);
}

/** Undefined for an optional prop left out; a ValidationError for a required one. */
function required(prop: ValidatedProp, expected: string, place: PropValuesPlace): undefined {
  if (prop.optional) return undefined;
  throw propError(prop.name, place, `${subjectOf(prop.name, place)}${prop.label ? ` (${prop.label})` : ""} is required: give it ${expected}.`);
}

/**
 * An error at one prop: `field` is its path in the request
 * (`configured_props.<prop>`, `steps[<i>].props.<prop>`), and `prop` (with
 * `step` for a workflow step's) its bare name, so that a form can show the
 * error beside that input without parsing the path.
 */
function propError(name: string, place: PropValuesPlace, message: string): ValidationError {
  return new ValidationError(`${place.field}.${name}`, message, { prop: name, ...(place.step === undefined ? {} : { step: place.step }) });
}

/** `Prop "url"`, or `Step "fetch": prop "url"` for a workflow step's. */
function subjectOf(name: string, place: PropValuesPlace): string {
  return place.step === undefined ? `Prop "${name}"` : `Step "${place.step}": prop "${name}"`;
}

function ownerOf(place: PropValuesPlace): string {
  return place.step === undefined ? "" : `Step "${place.step}": `;
}

function what(prop: ValidatedProp): string {
  if (prop.isArray) return `a list of ${prop.baseType} values`;
  const names: Partial<Record<string, string>> = {
    boolean: "true or false",
    integer: "a whole number",
    string: "a string",
    object: "a JSON object",
    any: "a value",
    data_store: "the name of a data store",
    http_request: "a request ({ method, url, … })",
  };
  return names[prop.baseType] ?? "a value";
}

function checkSize(name: string, value: unknown, place: PropValuesPlace): void {
  const json = JSON.stringify(value);
  const bytes = json === undefined ? 0 : Buffer.byteLength(json, "utf8");
  if (bytes > MAX_PROP_VALUE_BYTES) {
    throw propError(
      name,
      place,
      `${subjectOf(name, place)} is ${Math.ceil(bytes / 1024)} KB as JSON; a prop value may be at most ${MAX_PROP_VALUE_BYTES / 1024} KB. Store large data elsewhere and pass a reference.`,
    );
  }
}

/** A problem's sentence without the value it quotes: a secret prop's value is never repeated, not even in an error. */
export function withoutValue(problem: string): string {
  return `${problem.replace(/;?\s*got [\s\S]*$/, "")} (the value given is not shown: the prop is secret).`;
}
