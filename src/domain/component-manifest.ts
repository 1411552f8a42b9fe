/**
 * What the sandbox reports about a loaded component module: its exported
 * definition with every function replaced by a marker, so that the server can
 * validate and describe a component without running user code itself.
 *
 * Fields are `unknown` on purpose: the manifest is untrusted input, and the
 * rules in domain/component-rules.ts decide what is valid.
 */

/** Where a function stood in the definition (an async options method, say). */
export interface FunctionMarker {
  $fn: true;
}

export function isFunctionMarker(value: unknown): value is FunctionMarker {
  return typeof value === "object" && value !== null && (value as { $fn?: unknown }).$fn === true;
}

/**
 * One prop as declared. A `propDefinition` has already been resolved by the
 * runner: the app's definition, then the component's own fields on top.
 * An app prop (`type: "app"`) carries `app`, `propDefinitions` and `methods`
 * (method names).
 */
export interface PropManifest {
  type?: unknown;
  label?: unknown;
  description?: unknown;
  optional?: unknown;
  default?: unknown;
  secret?: unknown;
  min?: unknown;
  max?: unknown;
  /** An array of values or {label, value}, or a FunctionMarker for an async options method. */
  options?: unknown;
  hidden?: unknown;
  disabled?: unknown;
  reloadProps?: unknown;
  /** For `$.interface.http`. */
  customResponse?: unknown;
  /** For `type: "app"`: the app's name slug. */
  app?: unknown;
  [field: string]: unknown;
}

export interface ComponentManifest {
  name?: unknown;
  key?: unknown;
  version?: unknown;
  /** "source", "action", or absent (a source). */
  type?: unknown;
  description?: unknown;
  dedupe?: unknown;
  /** An app file's (`type: "app"`) name slug. */
  app?: unknown;
  /** An app file's prop definitions, as written (functions as FunctionMarker). */
  propDefinitions?: unknown;
  /** An app file's `methods` as written (functions as FunctionMarker), so that a non-function is named, not dropped. */
  appMethods?: unknown;
  /** In declaration order (object key order of `props`). */
  props: Record<string, PropManifest>;
  methods: string[];
  hooks: string[];
  hasRun: boolean;
  hasAdditionalProps: boolean;
}
