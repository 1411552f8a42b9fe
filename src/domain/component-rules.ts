import type { ComponentManifest } from "./component-manifest.js";
import { isDedupeStrategy, type DedupeStrategy } from "./dedupe.js";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import { validateProp } from "./prop-rules.js";
import type { ComponentKind, PropOption, ValidatedProp } from "./prop-types.js";
import { isPlainObject } from "./prop-values.js";

/**
 * The rules of a component definition (SEED "Component"), checked on the
 * manifest the sandbox reports. Errors name the property (`name`, `dedupe`,
 * `props.<prop>.<field>`) and the rule it breaks.
 */
export const HOOK_NAMES = ["deploy", "activate", "deactivate"] as const;
export type HookName = (typeof HOOK_NAMES)[number];

// A lower-case slug; registry keys (`<app>-<component>`) are one too.
const KEY = /^[a-z0-9][a-z0-9_-]*$/;

export interface ValidatedComponent {
  kind: ComponentKind;
  name: string;
  version: string;
  key: string | null;
  description: string | null;
  dedupe: DedupeStrategy | null;
  /** In declaration order. */
  props: ValidatedProp[];
  hooks: HookName[];
  methods: string[];
  hasRun: boolean;
  hasAdditionalProps: boolean;
}

export interface ValidateOptions {
  /**
   * A workflow's code step: written as the hosted service's code steps are
   * (`defineComponent({ props, run({ steps, $ }) })`), usually without name,
   * version or type. It is an action whatever its type says, unless it says source.
   */
  asStep?: boolean;
}

export function validateComponent(manifest: ComponentManifest, options: ValidateOptions = {}): ValidatedComponent {
  if (options.asStep) {
    if (manifest.type === "source") throw new ValidationError("type", 'A step runs as an action; this code says type: "source". Remove the type, or make it "action".');
    manifest = { ...manifest, name: manifest.name ?? "Code step", version: manifest.version ?? "0.0.0", type: "action" };
  }
  const { name, version, type, key, description, dedupe } = manifest;
  if (typeof name !== "string" || name.trim() === "") {
    throw new ValidationError("name", `A component needs a name: a non-empty string (it names deployed instances); got ${describeValue(name)}.`);
  }
  if (typeof version !== "string" || version === "") {
    throw new ValidationError("version", `A component needs a version: a non-empty string such as "0.0.1"; got ${describeValue(version)}.`);
  }
  if (type !== undefined && type !== "source" && type !== "action") {
    throw new ValidationError("type", `type must be "source" or "action" (or left out for a source); got ${JSON.stringify(type) ?? describeValue(type)}.`);
  }
  const kind: ComponentKind = type ?? "source";
  if (key !== undefined && (typeof key !== "string" || !KEY.test(key))) {
    throw new ValidationError("key", `key must be a lower-case slug (letters, digits, "-" and "_", starting with a letter or digit), such as "github-new-issue"; got ${JSON.stringify(key) ?? describeValue(key)}.`);
  }
  if (description !== undefined && typeof description !== "string") {
    throw new ValidationError("description", `description must be a string; got ${describeValue(description)}.`);
  }
  if (dedupe !== undefined) {
    if (kind !== "source") throw new ValidationError("dedupe", "dedupe is only for sources; remove it from this action.");
    if (!isDedupeStrategy(dedupe)) {
      throw new ValidationError("dedupe", `dedupe must be "unique", "greatest" or "last"; got ${JSON.stringify(dedupe) ?? describeValue(dedupe)}.`);
    }
  }
  const hooks = checkHooks(manifest.hooks, kind);
  const methods = manifest.methods.filter((method) => typeof method === "string");
  const props = checkProps(manifest.props, kind, methods);
  // A source with a timer and no run is a plain schedule: each tick emits the timer event (API-COMPAT).
  // Likewise a plain endpoint: an HTTP source without run emits each request (a workflow's HTTP trigger).
  const isPlain = kind === "source" && props.some((prop) => prop.baseType === "$.interface.timer" || prop.baseType === "$.interface.http");
  if (!manifest.hasRun && !isPlain) {
    const message =
      kind === "action"
        ? "An action needs a run method."
        : "A source needs a run method; only a source with a $.interface.timer or $.interface.http prop (it emits the tick or the request itself) may leave it out.";
    throw new ValidationError("run", message);
  }
  return {
    kind,
    name,
    version,
    key: key ?? null,
    description: description ?? null,
    dedupe: dedupe ?? null,
    props,
    hooks,
    methods,
    hasRun: manifest.hasRun,
    hasAdditionalProps: manifest.hasAdditionalProps,
  };
}

function checkHooks(hooks: string[], kind: ComponentKind): HookName[] {
  if (hooks.length > 0 && kind !== "source") {
    throw new ValidationError("hooks", `Hooks are only for sources; remove ${hooks.join(", ")} from this action.`);
  }
  const unknown = hooks.find((hook) => !(HOOK_NAMES as readonly string[]).includes(hook));
  if (unknown !== undefined) {
    throw new ValidationError("hooks", `Unknown hook "${unknown}"; a source may have deploy, activate and deactivate hooks.`);
  }
  return hooks as HookName[];
}

function checkProps(props: unknown, kind: ComponentKind, methods: string[]): ValidatedProp[] {
  if (props === undefined) return [];
  if (!isPlainObject(props)) throw new ValidationError("props", `props must be an object of named props; got ${describeValue(props)}.`);
  return Object.entries(props).map(([name, declared]) => {
    // Both become this.<name>; one would hide the other.
    if (methods.includes(name)) {
      throw new ValidationError(`props.${name}`, `"${name}" is both a prop and a method; rename one, since both are read as this.${name}.`);
    }
    return validateProp(name, declared, kind);
  });
}

/** One entry of `configurable_props`, as the hosted API shows them: only the fields that apply. */
export interface ConfigurableProp {
  name: string;
  type: string;
  app?: string;
  label?: string;
  description?: string;
  optional?: true;
  default?: unknown;
  secret?: true;
  min?: number;
  max?: number;
  options?: PropOption[];
  remoteOptions?: true;
  hidden?: true;
  disabled?: true;
  reloadProps?: true;
  customResponse?: true;
}

/** The `configurable_props` of a component; flags show only when true. */
export function toConfigurableProps(component: Pick<ValidatedComponent, "props">): ConfigurableProp[] {
  return component.props.map((prop) => {
    const out: ConfigurableProp = { name: prop.name, type: prop.type };
    const copy = <K extends keyof ConfigurableProp & keyof ValidatedProp>(field: K) => {
      if (prop[field] !== undefined) out[field] = prop[field] as ConfigurableProp[K];
    };
    const flag = (field: "optional" | "secret" | "remoteOptions" | "hidden" | "disabled" | "reloadProps" | "customResponse") => {
      if (prop[field]) out[field] = true;
    };
    copy("app");
    copy("label");
    copy("description");
    flag("optional");
    copy("default");
    flag("secret");
    copy("min");
    copy("max");
    copy("options");
    flag("remoteOptions");
    flag("hidden");
    flag("disabled");
    flag("reloadProps");
    flag("customResponse");
    return out;
  });
}
