/**
 * The prop types a component may declare (SEED "Props" table, plus the
 * `data_store` and `http_request` types existing components use, API-COMPAT),
 * and what each allows.
 */
export const PROP_TYPES = [
  "app",
  "boolean",
  "integer",
  "string",
  "object",
  "any",
  "$.interface.http",
  "$.interface.timer",
  "$.service.db",
  "data_store",
  "http_request",
] as const;
export type PropType = (typeof PROP_TYPES)[number];

export type ComponentKind = "source" | "action";

/**
 * input: a value the user configures. interface: how a source is triggered.
 * service: a platform service attached to the instance (`data_store` is one,
 * though the user picks the store by name). app: a connected account.
 */
export type PropKind = "input" | "interface" | "service" | "app";

interface TypeRule {
  kind: PropKind;
  arrays: boolean;
  in: readonly ComponentKind[];
}

const BOTH = ["source", "action"] as const;

const RULES: Record<PropType, TypeRule> = {
  app: { kind: "app", arrays: false, in: BOTH },
  boolean: { kind: "input", arrays: true, in: BOTH },
  integer: { kind: "input", arrays: true, in: BOTH },
  string: { kind: "input", arrays: true, in: BOTH },
  object: { kind: "input", arrays: false, in: BOTH },
  any: { kind: "input", arrays: false, in: ["action"] },
  "$.interface.http": { kind: "interface", arrays: false, in: ["source"] },
  "$.interface.timer": { kind: "interface", arrays: false, in: ["source"] },
  "$.service.db": { kind: "service", arrays: false, in: BOTH },
  data_store: { kind: "service", arrays: false, in: BOTH },
  http_request: { kind: "input", arrays: false, in: BOTH },
};

export function isPropType(value: string): value is PropType {
  return (PROP_TYPES as readonly string[]).includes(value);
}

/** A declared type split into its base and the `[]` suffix; null when the base is unknown. */
export function parsePropType(declared: string): { base: PropType; isArray: boolean } | null {
  const isArray = declared.endsWith("[]");
  const base = isArray ? declared.slice(0, -2) : declared;
  return isPropType(base) ? { base, isArray } : null;
}

export function propKindOf(type: PropType): PropKind {
  return RULES[type].kind;
}

export function supportsArrays(type: PropType): boolean {
  return RULES[type].arrays;
}

export function isAllowedIn(type: PropType, component: ComponentKind): boolean {
  return RULES[type].in.includes(component);
}

/** A static drop-down option: a value, or a value with a label to show. */
export type PropOption = string | number | boolean | { label: string; value: unknown };

/** A prop after validation: declared fields checked, booleans defaulted. */
export interface ValidatedProp {
  name: string;
  /** As declared, `[]` included ("string[]"). */
  type: string;
  baseType: PropType;
  isArray: boolean;
  kind: PropKind;
  label?: string;
  description?: string;
  optional: boolean;
  /** Absent when the prop has no default. */
  default?: unknown;
  secret: boolean;
  min?: number;
  max?: number;
  /** Static options; absent when there are none or they come from a method. */
  options?: PropOption[];
  /** Options come from an async `options()` method. */
  remoteOptions: boolean;
  /** For app props: the app's name slug. */
  app?: string;
  customResponse: boolean;
  hidden: boolean;
  disabled: boolean;
  reloadProps: boolean;
}
