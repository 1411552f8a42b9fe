/**
 * Loading the bundle and checking that it exports a component: an object
 * whose run, methods and hooks are functions where present.
 */
import { createRequire } from "node:module";

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

/** A prop declaration as written: type, label, options… or an app object. */
export type PropDeclaration = Record<string, unknown>;

/** `{ type: "app", app, propDefinitions?, methods? }`, usually imported from the app's own file. */
export type AppDeclaration = PropDeclaration & { type: "app" };

export interface Component {
  definition: Record<string, unknown>;
  props: Record<string, PropDeclaration>;
  methods: Record<string, AnyFunction>;
  hooks: Record<string, AnyFunction>;
  run: AnyFunction | undefined;
}

/** The module did not load or is not a component; the message says which and why. */
export class InvalidComponentError extends Error {
  override readonly name = "InvalidComponent";
}

/** Components call these without importing them (they come from @pipedream/types); each returns its argument. */
export function installDefineGlobals(): void {
  const identity = <T>(definition: T): T => definition;
  for (const name of ["defineComponent", "defineSource", "defineAction", "defineApp"]) {
    Object.defineProperty(globalThis, name, { value: identity, writable: true, configurable: true });
  }
}

/** An app object, whether listed as a prop or named in a propDefinition. */
export function isAppDeclaration(prop: unknown): prop is AppDeclaration {
  return typeof prop === "object" && prop !== null && (prop as { type?: unknown }).type === "app";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function functionsOf(definition: Record<string, unknown>, field: "methods" | "hooks"): Record<string, AnyFunction> {
  const group = definition[field];
  if (group === undefined) return {};
  // An app file's methods are described as they are and judged on the host (domain/app-files.ts), which names the field.
  const lenient = isAppDeclaration(definition);
  if (!isRecord(group)) {
    if (lenient) return {};
    throw new InvalidComponentError(`The component's ${field} must be an object of functions, found ${describeType(group)}.`);
  }
  const functions: Record<string, AnyFunction> = {};
  for (const [name, value] of Object.entries(group)) {
    if (typeof value !== "function") {
      if (lenient) continue;
      throw new InvalidComponentError(`The component's ${field}.${name} must be a function, found ${describeType(value)}.`);
    }
    functions[name] = value as AnyFunction;
  }
  return functions;
}

/** Props as objects: the shorthand `db: "$.service.db"` is `{ type: "$.service.db" }`. */
function propsOf(definition: Record<string, unknown>): Record<string, PropDeclaration> {
  const props = definition.props;
  if (props === undefined) return {};
  if (!isRecord(props)) throw new InvalidComponentError(`The component's props must be an object, found ${describeType(props)}.`);
  const declarations: Record<string, PropDeclaration> = {};
  for (const [name, prop] of Object.entries(props)) {
    if (typeof prop === "string") declarations[name] = { type: prop };
    else if (isRecord(prop)) declarations[name] = prop;
    else throw new InvalidComponentError(`The component's props.${name} must be an object (or a type name), found ${describeType(prop)}.`);
  }
  return declarations;
}

/** `module.exports = component`, or an ES module compiled to CommonJS: `{ default: component }`. */
function unwrapDefault(exported: unknown): unknown {
  if (!isRecord(exported) || !isRecord(exported.default)) return exported;
  const looksLikeComponent = "run" in exported || "props" in exported || "name" in exported || "key" in exported;
  return looksLikeComponent ? exported : exported.default;
}

export function toComponent(exported: unknown): Component {
  const definition = unwrapDefault(exported);
  if (!isRecord(definition)) {
    throw new InvalidComponentError(`The module must export a component object (module.exports = { … } or export default { … }), but it exports ${describeType(definition)}.`);
  }
  const run = definition.run;
  if (run !== undefined && typeof run !== "function") throw new InvalidComponentError(`The component's run must be a function, found ${describeType(run)}.`);
  return {
    definition,
    props: propsOf(definition),
    methods: functionsOf(definition, "methods"),
    hooks: functionsOf(definition, "hooks"),
    run: run as AnyFunction | undefined,
  };
}

/** Requires the bundle file; a throw at load becomes InvalidComponentError saying so, with the original stack. */
export function requireBundle(file: string): unknown {
  try {
    return createRequire(file)(file);
  } catch (thrown) {
    const detail = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
    const error = new InvalidComponentError(`The component module failed to load: ${detail}`);
    if (thrown instanceof Error && thrown.stack) error.stack = `${error.name}: ${error.message}\n${thrown.stack.split("\n").slice(1).join("\n")}`;
    throw error;
  }
}
