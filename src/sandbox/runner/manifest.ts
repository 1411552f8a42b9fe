/**
 * The ComponentManifest of a loaded component: its definition as plain data,
 * every function replaced by { $fn: true }, propDefinitions resolved, app
 * props described by their definitions and method names.
 */
import type { ComponentManifest, PropManifest } from "../../domain/component-manifest.js";
import { isAppDeclaration, type Component, type PropDeclaration } from "./component.js";
import { resolveProp } from "./prop-definition.js";

const STATIC_FIELDS = ["name", "key", "version", "type", "description", "dedupe"] as const;
const MAX_DEPTH = 50;

/** Plain data only: it crosses the wire, where a function or a class instance would not survive. */
export function describeValue(value: unknown, depth = 0, open = new Set<object>()): unknown {
  if (typeof value === "function") return { $fn: true };
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "symbol" || value === undefined) return undefined;
  if (typeof value !== "object" || value === null) return value;
  if (depth > MAX_DEPTH || open.has(value)) return null;
  if (value instanceof Date) return value.toISOString();
  open.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => describeValue(item, depth + 1, open) ?? null);
    const described: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const result = describeValue(item, depth + 1, open);
      if (result !== undefined) described[key] = result;
    }
    return described;
  } finally {
    open.delete(value);
  }
}

function functionNames(group: unknown): string[] {
  if (typeof group !== "object" || group === null) return [];
  return Object.entries(group)
    .filter(([, value]) => typeof value === "function")
    .map(([name]) => name);
}

export function describeApp(app: PropDeclaration): PropManifest {
  return {
    type: "app",
    app: describeValue(app.app),
    // An app prop written inline (`{ type: "app", app: "github", label: "Work account" }`) keeps what the form shows.
    ...(typeof app.label === "string" ? { label: app.label } : {}),
    ...(typeof app.description === "string" ? { description: app.description } : {}),
    ...(typeof app.optional === "boolean" ? { optional: app.optional } : {}),
    propDefinitions: describeValue(app.propDefinitions ?? {}),
    methods: functionNames(app.methods),
  };
}

function describeProp(name: string, prop: PropDeclaration): PropManifest {
  if (isAppDeclaration(prop)) return describeApp(prop);
  return describeValue(resolveProp(name, prop).declaration) as PropManifest;
}

export function describeComponent(component: Component): ComponentManifest {
  const { definition } = component;
  const fields: Record<string, unknown> = {};
  for (const field of STATIC_FIELDS) {
    const value = describeValue(definition[field]);
    if (value !== undefined) fields[field] = value;
  }
  const props: Record<string, PropManifest> = {};
  for (const [name, prop] of Object.entries(component.props)) props[name] = describeProp(name, prop);
  // An app file (`type: "app"`): its slug, prop definitions and methods as written, for the host to judge.
  const appFields = isAppDeclaration(definition)
    ? { app: describeValue(definition.app), propDefinitions: describeValue(definition.propDefinitions), appMethods: describeValue(definition.methods) }
    : {};
  return {
    ...fields,
    ...appFields,
    props,
    methods: Object.keys(component.methods),
    hooks: Object.keys(component.hooks),
    hasRun: component.run !== undefined,
    hasAdditionalProps: typeof definition.additionalProps === "function",
  };
}
