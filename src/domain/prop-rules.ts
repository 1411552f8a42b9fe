import { isFunctionMarker } from "./component-manifest.js";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import {
  PROP_TYPES,
  isAllowedIn,
  parsePropType,
  propKindOf,
  supportsArrays,
  type ComponentKind,
  type PropOption,
  type ValidatedProp,
} from "./prop-types.js";
import { checkPropValue, isPlainObject, normalizeTimer } from "./prop-values.js";

/**
 * The rules of one declared prop (SEED "Props", "Interface props"). Errors
 * name the field as `props.<prop>.<field>`. Fields this API does not know
 * (`propDefinitions`, `methods` of an app, `useQuery`, …) are left alone.
 */
export function validateProp(name: string, declared: unknown, component: ComponentKind): ValidatedProp {
  const at = (field: string) => `props.${name}.${field}`;
  // `db: "$.service.db"` is the short form of `db: { type: "$.service.db" }`.
  const raw = typeof declared === "string" ? { type: declared } : declared;
  if (!isPlainObject(raw)) {
    throw new ValidationError(`props.${name}`, `Prop "${name}" must be an object with a type, such as { type: "string" }; got ${describeValue(declared)}.`);
  }

  if (typeof raw.type !== "string" || raw.type === "") {
    throw new ValidationError(at("type"), `Prop "${name}" needs a type: one of ${PROP_TYPES.join(", ")}.`);
  }
  const parsed = parsePropType(raw.type);
  if (parsed === null) {
    throw new ValidationError(at("type"), `Prop "${name}" has an unknown type "${raw.type}"; use one of ${PROP_TYPES.join(", ")}.`);
  }
  const { base, isArray } = parsed;
  if (isArray && !supportsArrays(base)) {
    throw new ValidationError(at("type"), `Prop "${name}": "${base}" props cannot be arrays; only boolean[], integer[] and string[] can.`);
  }
  if (!isAllowedIn(base, component)) {
    const where = base === "any" ? "actions" : "sources";
    throw new ValidationError(at("type"), `Prop "${name}": "${base}" props are only allowed in ${where}, and this component is ${component === "action" ? "an action" : "a source"}.`);
  }
  const kind = propKindOf(base);

  const flag = (field: string) => optionalOf(name, raw, field, "boolean", at) === true;
  const label = optionalOf(name, raw, "label", "string", at);
  const description = optionalOf(name, raw, "description", "string", at);
  const prop: ValidatedProp = {
    name,
    type: raw.type,
    baseType: base,
    isArray,
    kind,
    ...(typeof label === "string" ? { label } : {}),
    ...(typeof description === "string" ? { description } : {}),
    optional: flag("optional"),
    secret: flag("secret"),
    remoteOptions: isFunctionMarker(raw.options),
    customResponse: flag("customResponse"),
    hidden: flag("hidden"),
    disabled: flag("disabled"),
    reloadProps: flag("reloadProps"),
  };

  if (prop.secret && raw.type !== "string") {
    throw new ValidationError(at("secret"), `Prop "${name}": secret is only for string props; this one is "${raw.type}".`);
  }
  checkRange(name, raw, base, prop, at);
  if (raw.options !== undefined && !prop.remoteOptions) prop.options = staticOptions(name, raw.options, at);
  if (base === "app") {
    if (typeof raw.app !== "string" || raw.app === "") {
      throw new ValidationError(at("app"), `App prop "${name}" needs app: the app's name slug (as in its .app file).`);
    }
    prop.app = raw.app;
  }
  if (raw.default !== undefined) prop.default = checkDefault(name, raw.default, prop, at);
  return prop;
}

function optionalOf(name: string, raw: Record<string, unknown>, field: string, type: "string" | "boolean", at: (f: string) => string) {
  const value = raw[field];
  if (value === undefined || typeof value === type) return value as string | boolean | undefined;
  throw new ValidationError(at(field), `Prop "${name}": ${field} must be ${type === "string" ? "a string" : "true or false"}; got ${describeValue(value)}.`);
}

function checkRange(name: string, raw: Record<string, unknown>, base: string, prop: ValidatedProp, at: (f: string) => string): void {
  for (const field of ["min", "max"] as const) {
    const value = raw[field];
    if (value === undefined) continue;
    if (base !== "integer") throw new ValidationError(at(field), `Prop "${name}": ${field} is only for integer props; this one is "${prop.type}".`);
    if (typeof value !== "number" || !Number.isSafeInteger(value)) {
      throw new ValidationError(at(field), `Prop "${name}": ${field} must be a whole number; got ${describeValue(value)}.`);
    }
    prop[field] = value;
  }
  if (prop.min !== undefined && prop.max !== undefined && prop.min > prop.max) {
    throw new ValidationError(at("min"), `Prop "${name}": min (${prop.min}) is greater than max (${prop.max}).`);
  }
}

function staticOptions(name: string, options: unknown, at: (f: string) => string): PropOption[] {
  const shape = "an array of strings, numbers, booleans or { label, value } objects, or an async options() method";
  if (!Array.isArray(options)) throw new ValidationError(at("options"), `Prop "${name}": options must be ${shape}; got ${describeValue(options)}.`);
  for (const [index, option] of options.entries()) {
    const primitive = ["string", "number", "boolean"].includes(typeof option);
    const labelled = isPlainObject(option) && typeof option.label === "string" && option.value !== undefined;
    if (!primitive && !labelled) {
      throw new ValidationError(at("options"), `Prop "${name}": option ${index} is not valid; options must be ${shape}.`);
    }
  }
  return options as PropOption[];
}

function checkDefault(name: string, value: unknown, prop: ValidatedProp, at: (f: string) => string): unknown {
  const field = at("default");
  if (prop.baseType === "$.interface.timer") {
    const timer = normalizeTimer(value);
    if ("error" in timer) throw new ValidationError(field, `Prop "${name}": the default timer ${timer.error}`);
    return timer.value;
  }
  if (prop.kind !== "input" && prop.baseType !== "data_store") {
    throw new ValidationError(field, `Prop "${name}": "${prop.type}" props take no default.`);
  }
  // A required prop may have a default too (API-COMPAT): it stands in when no value is configured.
  if (isFunctionMarker(value)) throw new ValidationError(field, `Prop "${name}": default must be a value, not a function.`);
  const problem = checkPropValue(prop, value);
  if (problem !== null) throw new ValidationError(field, `Prop "${name}": default ${problem}`);
  return value;
}
