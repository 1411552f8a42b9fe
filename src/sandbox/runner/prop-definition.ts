/**
 * `propDefinition: [app, "name", inputValues?]`: the app's definition of that
 * prop, with the fields the component gives beside it on top.
 */
import { InvalidComponentError, isAppDeclaration, type PropDeclaration } from "./component.js";

export interface ResolvedProp {
  declaration: PropDeclaration;
  /** The app the definition came from, when the prop has a propDefinition. */
  app?: PropDeclaration;
  /** Set when `options` is the app's own (so it runs with `this` = the app). */
  optionsFromApp: boolean;
  /** The third element: an object, or a function of the configured props returning one. */
  inputValues?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function resolveProp(name: string, prop: PropDeclaration): ResolvedProp {
  const reference = prop.propDefinition;
  if (reference === undefined) return { declaration: prop, optionsFromApp: false };
  if (!Array.isArray(reference) || reference.length < 2) {
    throw new InvalidComponentError(`props.${name}.propDefinition must be an array [app, "definitionName", inputValues?].`);
  }
  const [app, definitionName, inputValues] = reference as unknown[];
  if (!isAppDeclaration(app)) {
    throw new InvalidComponentError(`props.${name}.propDefinition must start with an app object (one with type: "app").`);
  }
  const definitions = isRecord(app.propDefinitions) ? app.propDefinitions : {};
  const definition = typeof definitionName === "string" ? definitions[definitionName] : undefined;
  if (!isRecord(definition)) {
    throw new InvalidComponentError(
      `props.${name}.propDefinition refers to ${JSON.stringify(definitionName)}, which app ${JSON.stringify(app.app)} does not define in its propDefinitions.`,
    );
  }
  const { propDefinition: _reference, ...own } = prop;
  const resolved: ResolvedProp = { declaration: { ...definition, ...own }, app, optionsFromApp: !("options" in own) };
  if (inputValues !== undefined) resolved.inputValues = inputValues;
  return resolved;
}
