import type { ConfigurableProp } from "./types";

/**
 * How the form shows a prop, from its declared type. The platform provides
 * HTTP interfaces and db services, so they take no input here; an app prop
 * takes one of the user's connected accounts.
 */
export type InputKind =
  | "string"
  | "integer"
  | "boolean"
  | "json" // object, any, http_request: JSON text
  | "timer"
  | "data_store"
  | "app" // a connected account of the prop's app, picked from the user's accounts
  | "provided"; // $.interface.http, $.service.db

export interface PropShape {
  kind: InputKind;
  isArray: boolean;
  /** Static options, or an async options method: the value is picked, not typed. */
  hasOptions: boolean;
}

export function shapeOf(prop: ConfigurableProp): PropShape {
  const isArray = prop.type.endsWith("[]");
  const base = isArray ? prop.type.slice(0, -2) : prop.type;
  const hasOptions = prop.options !== undefined || prop.remoteOptions === true;
  return { kind: kindOf(base), isArray, hasOptions };
}

function kindOf(base: string): InputKind {
  switch (base) {
    case "string":
      return "string";
    case "integer":
      return "integer";
    case "boolean":
      return "boolean";
    case "object":
    case "any":
    case "http_request":
      return "json";
    case "$.interface.timer":
      return "timer";
    case "data_store":
      return "data_store";
    case "app":
      return "app";
    default:
      return "provided";
  }
}

/** The label a person sees: the prop's own, else its name (SEED: label defaults to the name). */
export function labelOf(prop: ConfigurableProp): string {
  return prop.label ?? prop.name;
}

/** Whether the prop is filled in by the user (not hidden, not provided by the platform). */
export function takesInput(prop: ConfigurableProp): boolean {
  return !prop.hidden && shapeOf(prop).kind !== "provided";
}
