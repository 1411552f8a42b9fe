import { describe, expect, it } from "vitest";
import type { PropManifest } from "./component-manifest.js";
import { validateComponent } from "./component-rules.js";
import { evaluateStepProps } from "./expressions.js";
import { checkEvaluatedProps, stepPropChecks } from "./step-prop-checks.js";
import { validationFieldOf as fieldOf } from "../../test/helpers/validation.js";

const action = (props: Record<string, PropManifest>) =>
  validateComponent({ name: "a", version: "1", type: "action", props, methods: [], hooks: [], hasRun: true, hasAdditionalProps: false });

const step = { name: "fetch", field: "steps[1]" };
const steps = { trigger: { event: { n: 5, text: "five", list: [1, 2], nothing: null } } };

/** Evaluates the props as the runner does, then checks them. */
function run(props: Record<string, PropManifest>, configured: Record<string, unknown>, env: Record<string, string> = {}) {
  const checks = stepPropChecks(action(props), configured);
  return checkEvaluatedProps(step, configured, evaluateStepProps(configured, steps, step, env), checks);
}

describe("step props checked once their expressions are evaluated", () => {
  it("passes values that fit, and only props with expressions carry checks", () => {
    expect(run({ n: { type: "integer" }, s: { type: "string" } }, { n: "{{steps.trigger.event.n}}", s: "plain" })).toEqual({ n: 5, s: "plain" });
    expect(Object.keys(stepPropChecks(action({ n: { type: "integer" }, s: { type: "string" } }), { n: "{{steps.a.b}}", s: "plain" }))).toEqual(["n"]);
  });

  it.each<[string, Record<string, PropManifest>, Record<string, unknown>, RegExp]>([
    ["a string for an integer", { n: { type: "integer" } }, { n: "{{steps.trigger.event.text}}" }, /^Step "fetch": prop "n" is \{\{steps\.trigger\.event\.text\}\}, which gave a string, and it must be a whole number\./],
    ["below min", { n: { type: "integer", min: 10 } }, { n: "{{steps.trigger.event.n}}" }, /which gave a number, and it must be at least 10\./],
    ["a wrong list item", { l: { type: "string[]" } }, { l: "{{steps.trigger.event.list}}" }, /which gave an array, and its item 0 must be a string\./],
    ["outside the options", { s: { type: "string", options: ["a"] } }, { s: "{{steps.trigger.event.text}}" }, /which gave a string that is not one of its options \("a"\)/],
    ["nothing for a required prop", { s: { type: "string" } }, { s: "{{steps.trigger.event.missing}}" }, /which gave nothing; the prop is required/],
    ["an environment variable for an integer", { n: { type: "integer" } }, { n: "{{process.env.PORT}}" }, /^Step "fetch": prop "n" is \{\{process\.env\.PORT\}\}, which gave a string, and it must be a whole number/],
  ])("refuses %s, naming the step, the prop, the expression and the type", (_rule, props, configured, message) => {
    expect(() => run(props, configured, { PORT: "8080" })).toThrow(message);
    expect(fieldOf(() => run(props, configured, { PORT: "8080" }))).toBe(`steps[1].props.${Object.keys(configured)[0]}`);
  });

  it("never shows the value, only its type", () => {
    expect(() => run({ n: { type: "integer" } }, { n: "{{process.env.TOKEN}}" }, { TOKEN: "s3cret-value" })).toThrow(/^(?![\s\S]*s3cret-value)/);
  });

  it("gives nothing to an optional prop, and the default to one that has it", () => {
    expect(run({ s: { type: "string", optional: true } }, { s: "{{steps.trigger.event.nothing}}" })).toEqual({});
    expect(run({ s: { type: "string", default: "d" } }, { s: "{{steps.trigger.event.missing}}" })).toEqual({ s: "d" });
  });
});

describe("{{process.env.NAME}}", () => {
  it("gives the variable's value, alone or inside text", () => {
    const env = { TOKEN: "abc", HOST: "api.test" };
    expect(evaluateStepProps({ a: "{{process.env.TOKEN}}", b: "https://{{ process.env.HOST }}/x?t={{process.env.TOKEN}}" }, {}, step, env)).toEqual({ a: "abc", b: "https://api.test/x?t=abc" });
  });

  it("fails naming an unknown variable, the step and the prop", () => {
    expect(() => evaluateStepProps({ url: "x {{process.env.NOPE}}" }, {}, step, { OTHER: "1" })).toThrow(
      /^Step "fetch": The expression \{\{process\.env\.NOPE\}\} in steps\[1\]\.props\.url reads the environment variable NOPE, which you do not have\./,
    );
    // Not Object.prototype's: a name is a variable or nothing.
    expect(() => evaluateStepProps({ url: "{{process.env.constructor}}" }, {}, step, {})).toThrow(/reads the environment variable constructor/);
  });
});
