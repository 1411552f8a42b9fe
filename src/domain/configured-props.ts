import { Buffer } from "node:buffer";
import type { ValidatedComponent } from "./component-rules.js";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import type { ValidatedProp } from "./prop-types.js";
import { checkPropValue, isAmongOptions, isPlainObject, normalizeTimer, optionValue } from "./prop-values.js";

/** SEED "Limits": a prop value is at most 64 KB. */
export const MAX_PROP_VALUE_BYTES = 64 * 1024;

/**
 * The values a user gives a component's props on deploy or update, checked
 * against its declared props; errors name `configured_props.<prop>`.
 * Returns the values to store, in declaration order, defaults applied.
 *
 * A null counts as not given, so a client can clear an optional prop.
 * Interface, service and app props are provided by the platform, not by
 * value, except a timer (its schedule) and a data store (the store's name).
 * Props returned by `additionalProps()` are not known here; when a component
 * has that method, names it does not declare pass through, size-checked only.
 */
export function validateConfiguredProps(component: ValidatedComponent, configured: Record<string, unknown>): Record<string, unknown> {
  if (!isPlainObject(configured)) {
    throw new ValidationError("configured_props", `configured_props must be an object of prop values by name; got ${describeValue(configured)}.`);
  }
  const declared = new Map(component.props.map((prop) => [prop.name, prop]));
  const extra: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(configured)) {
    checkSize(name, value);
    if (declared.has(name)) continue;
    if (!component.hasAdditionalProps) {
      const known = component.props.map((prop) => prop.name).join(", ") || "none";
      throw new ValidationError(`configured_props.${name}`, `Unknown prop "${name}"; this component's props are: ${known}.`);
    }
    if (value !== null && value !== undefined) extra[name] = value;
  }
  const out: Record<string, unknown> = {};
  for (const prop of component.props) {
    // Own properties only: a prop named "constructor" must not read Object.prototype's.
    const given = Object.hasOwn(configured, prop.name) ? configured[prop.name] : undefined;
    const value = configuredValue(prop, given ?? undefined);
    if (value !== undefined) out[prop.name] = value;
  }
  return { ...out, ...extra };
}

function configuredValue(prop: ValidatedProp, given: unknown): unknown {
  const field = `configured_props.${prop.name}`;
  if (prop.baseType === "$.interface.timer") {
    const value = given ?? prop.default;
    if (value === undefined) return required(prop, "a timer: { intervalSeconds: 60 } or { cron: \"0 * * * *\" }");
    const timer = normalizeTimer(value);
    if ("error" in timer) throw new ValidationError(field, `Timer "${prop.name}" ${timer.error}`);
    return timer.value;
  }
  if (prop.kind !== "input" && prop.baseType !== "data_store") {
    if (given !== undefined) {
      throw new ValidationError(field, `Prop "${prop.name}" (${prop.type}) takes no value: the platform provides it. Leave it out of configured_props.`);
    }
    return undefined;
  }
  if (given === undefined) return prop.default ?? required(prop, what(prop));
  const problem = checkPropValue(prop, given);
  if (problem !== null) throw new ValidationError(field, `Prop "${prop.name}" ${prop.secret ? withoutValue(problem) : problem}`);
  if (prop.options !== undefined) {
    const items = prop.isArray ? (given as unknown[]) : [given];
    const outside = items.find((item) => !isAmongOptions(item, prop.options ?? []));
    if (outside !== undefined) {
      if (prop.secret) throw new ValidationError(field, `Prop "${prop.name}": the value given is not one of its options (it is secret, so neither is shown).`);
      const allowed = prop.options.slice(0, 10).map((option) => JSON.stringify(optionValue(option)));
      const more = prop.options.length > 10 ? ", …" : "";
      throw new ValidationError(field, `Prop "${prop.name}": ${JSON.stringify(outside)} is not one of its options (${allowed.join(", ")}${more}).`);
    }
  }
  return given;
}

/** Undefined for an optional prop left out; a ValidationError for a required one. */
function required(prop: ValidatedProp, expected: string): undefined {
  if (prop.optional) return undefined;
  throw new ValidationError(`configured_props.${prop.name}`, `Prop "${prop.name}"${prop.label ? ` (${prop.label})` : ""} is required: give it ${expected}.`);
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

function checkSize(name: string, value: unknown): void {
  const json = JSON.stringify(value);
  const bytes = json === undefined ? 0 : Buffer.byteLength(json, "utf8");
  if (bytes > MAX_PROP_VALUE_BYTES) {
    throw new ValidationError(
      `configured_props.${name}`,
      `Prop "${name}" is ${Math.ceil(bytes / 1024)} KB as JSON; a prop value may be at most ${MAX_PROP_VALUE_BYTES / 1024} KB. Store large data elsewhere and pass a reference.`,
    );
  }
}

/** A problem's sentence without the value it quotes: a secret prop's value is never repeated, not even in an error. */
function withoutValue(problem: string): string {
  return `${problem.replace(/;?\s*got [\s\S]*$/, "")} (the value given is not shown: the prop is secret).`;
}
