import type { ValidatedComponent } from "./component-rules.js";
import { describeType } from "./describe-value.js";
import { ValidationError } from "./errors.js";
import { expressionsIn, hasExpressions } from "./expressions.js";
import type { PropOption, PropType } from "./prop-types.js";
import { checkPropValue, isAmongOptions, optionsList } from "./prop-values.js";

/**
 * What a step's prop must be once its `{{ }}` expressions are evaluated: the
 * rules of the declared prop, carried with the step to wherever it is
 * evaluated (the runner, or the host for built-in steps). Only props whose
 * value holds an expression have one: the rest were checked when the
 * workflow was saved (configured-props.ts).
 */
export interface StepPropCheck {
  baseType: PropType;
  isArray: boolean;
  min?: number;
  max?: number;
  options?: PropOption[];
  optional: boolean;
  /** Stands in when the expression gives nothing. */
  default?: unknown;
}

export function stepPropChecks(component: ValidatedComponent, props: Record<string, unknown>): Record<string, StepPropCheck> {
  const checks: Record<string, StepPropCheck> = {};
  for (const prop of component.props) {
    if ((prop.kind !== "input" && prop.baseType !== "data_store") || !hasExpressions(props[prop.name])) continue;
    checks[prop.name] = {
      baseType: prop.baseType,
      isArray: prop.isArray,
      ...(prop.min !== undefined ? { min: prop.min } : {}),
      ...(prop.max !== undefined ? { max: prop.max } : {}),
      ...(prop.options !== undefined ? { options: prop.options } : {}),
      optional: prop.optional,
      ...(prop.default !== undefined ? { default: prop.default } : {}),
    };
  }
  return checks;
}

/**
 * The evaluated props, each checked against its prop: an expression that gave
 * nothing leaves the default (or nothing, for an optional prop); one whose
 * value does not fit is a ValidationError naming the step, the prop, the
 * expression and the type of the value (never the value: it may be secret).
 */
export function checkEvaluatedProps(
  step: { name: string; field: string },
  configured: Record<string, unknown>,
  evaluated: Record<string, unknown>,
  checks: Record<string, StepPropCheck> | undefined,
): Record<string, unknown> {
  if (!checks) return evaluated;
  const out = { ...evaluated };
  for (const [name, check] of Object.entries(checks)) {
    if (!Object.hasOwn(out, name)) continue;
    const value = out[name];
    const field = `${step.field}.props.${name}`;
    // Made only for an error: this runs for every prop of every step of every run.
    const gave = () => `Step "${step.name}": prop "${name}" is ${expressionsIn(configured[name]).join(", ")}, which gave ${describeType(value)}`;
    if (value === undefined || value === null) {
      if (check.default !== undefined) out[name] = check.default;
      else if (check.optional) delete out[name];
      else throw new ValidationError(field, `${gave()}; the prop is required. Check the path, or give the prop a value that is always there.`);
      continue;
    }
    const problem = checkPropValue(check, value);
    if (problem !== null) {
      const rule = problem.replace(/;?\s*got [\s\S]*$/, "");
      throw new ValidationError(field, `${gave()}, and ${rule.startsWith("item ") ? `its ${rule}` : `it ${rule}`}. Fix the expression, or what it reads.`);
    }
    if (check.options !== undefined) {
      const items = check.isArray ? (value as unknown[]) : [value];
      if (items.some((item) => !isAmongOptions(item, check.options ?? []))) {
        throw new ValidationError(field, `${gave()} that is not one of its options (${optionsList(check)}). Fix the expression, or what it reads.`);
      }
    }
  }
  return out;
}
