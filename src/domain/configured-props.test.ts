import { describe, expect, it } from "vitest";
import type { PropManifest } from "./component-manifest.js";
import { validateComponent, type ValidatedComponent } from "./component-rules.js";
import { MAX_PROP_VALUE_BYTES, validateConfiguredProps } from "./configured-props.js";
import { newId } from "./ids.js";
import { validationFieldOf as fieldOf } from "../../test/helpers/validation.js";

function component(props: Record<string, PropManifest>, over: { type?: string; hasAdditionalProps?: boolean } = {}): ValidatedComponent {
  return validateComponent({
    name: "c",
    version: "1",
    type: over.type ?? "action",
    props,
    methods: [],
    hooks: [],
    hasRun: true,
    hasAdditionalProps: over.hasAdditionalProps ?? false,
  });
}
const source = (props: Record<string, PropManifest>) => component(props, { type: "source" });

const timer = { type: "$.interface.timer", default: { intervalSeconds: 900 } };
const abc = { type: "string", options: ["a", "b", "c"] };
const labelled = { type: "integer", options: [{ label: "One", value: 1 }, { label: "Two", value: 2 }] };

// [rule, component, configured, stored values]
const PASSING: Array<[string, ValidatedComponent, Record<string, unknown>, Record<string, unknown>]> = [
  ["a required prop given", component({ s: { type: "string" } }), { s: "x" }, { s: "x" }],
  ["an optional prop left out", component({ s: { type: "string", optional: true } }), {}, {}],
  ["a null optional prop counts as left out", component({ s: { type: "string", optional: true } }), { s: null }, {}],
  ["a default applied", component({ n: { type: "integer", optional: true, default: 5 } }), {}, { n: 5 }],
  ["a false default applied", component({ b: { type: "boolean", optional: true, default: false } }), {}, { b: false }],
  ["a required prop's default stands in when none is given", component({ n: { type: "integer", default: 5 } }), {}, { n: 5 }],
  ["a required prop's default stands in for null", component({ s: { type: "string", default: "x" } }), { s: null }, { s: "x" }],
  ["a given value beats the default", component({ n: { type: "integer", optional: true, default: 5 } }), { n: 7 }, { n: 7 }],
  ["boolean", component({ b: { type: "boolean" } }), { b: true }, { b: true }],
  ["integer within min/max", component({ n: { type: "integer", min: 1, max: 10 } }), { n: 10 }, { n: 10 }],
  ["object", component({ o: { type: "object" } }), { o: { a: [1] } }, { o: { a: [1] } }],
  ["string[]", component({ l: { type: "string[]" } }), { l: ["a", "b"] }, { l: ["a", "b"] }],
  ["an empty integer[]", component({ l: { type: "integer[]" } }), { l: [] }, { l: [] }],
  ["any: a list", component({ v: { type: "any" } }), { v: [1, "x"] }, { v: [1, "x"] }],
  ["any: a number", component({ v: { type: "any" } }), { v: 3 }, { v: 3 }],
  ["one of the options", component({ s: abc }), { s: "b" }, { s: "b" }],
  ["an option by its value", component({ n: labelled }), { n: 2 }, { n: 2 }],
  ["a list of options", component({ l: { ...abc, type: "string[]" } }), { l: ["a", "c"] }, { l: ["a", "c"] }],
  ["remote options do not restrict", component({ s: { type: "string", options: { $fn: true } } }), { s: "z" }, { s: "z" }],
  ["a value of exactly 64 KB", component({ s: { type: "string" } }), { s: "x".repeat(MAX_PROP_VALUE_BYTES - 2) }, { s: "x".repeat(MAX_PROP_VALUE_BYTES - 2) }],
  ["a data store name", component({ d: { type: "data_store" } }), { d: "cache" }, { d: "cache" }],
  ["an http request", component({ r: { type: "http_request" } }), { r: { method: "GET", url: "https://x.test" } }, { r: { method: "GET", url: "https://x.test" } }],
  ["timer default when left out", source({ timer }), {}, { timer: { intervalSeconds: 900 } }],
  ["timer interval given", source({ timer }), { timer: { intervalSeconds: 60 } }, { timer: { intervalSeconds: 60 } }],
  ["timer cron given", source({ timer }), { timer: { cron: "*/5 * * * *" } }, { timer: { cron: "*/5 * * * *" } }],
  ["timer 6-field cron", source({ timer }), { timer: { cron: "0 */5 * * * *" } }, { timer: { cron: "0 */5 * * * *" } }],
  ["timer as the API echoes it", source({ timer }), { timer: { cron: null, interval_seconds: 60 } }, { timer: { intervalSeconds: 60 } }],
  ["http, db and app props left out", source({ http: { type: "$.interface.http" }, db: { type: "$.service.db" }, gh: { type: "app", app: "github" } }), {}, {}],
  ["declaration order", component({ b: { type: "string" }, a: { type: "string" } }), { a: "1", b: "2" }, { b: "2", a: "1" }],
  ["a prop named like an Object method", component({ constructor: { type: "string", optional: true } }), {}, {}],
  ["additionalProps pass through", component({}, { hasAdditionalProps: true }), { extra: { any: "thing" } }, { extra: { any: "thing" } }],
];

// [rule, component, configured, field named]
const FAILING: Array<[string, ValidatedComponent, unknown, string]> = [
  ["not an object", component({}), [], "configured_props"],
  ["an unknown prop", component({ s: { type: "string", optional: true } }), { t: "x" }, "configured_props.t"],
  ["a required prop left out", component({ s: { type: "string" } }), {}, "configured_props.s"],
  ["a required prop given null", component({ s: { type: "string" } }), { s: null }, "configured_props.s"],
  ["boolean as text", component({ b: { type: "boolean" } }), { b: "true" }, "configured_props.b"],
  ["integer with a fraction", component({ n: { type: "integer" } }), { n: 1.5 }, "configured_props.n"],
  ["integer as text", component({ n: { type: "integer" } }), { n: "5" }, "configured_props.n"],
  ["integer below min", component({ n: { type: "integer", min: 1 } }), { n: 0 }, "configured_props.n"],
  ["integer above max", component({ n: { type: "integer", max: 10 } }), { n: 11 }, "configured_props.n"],
  ["string as a number", component({ s: { type: "string" } }), { s: 5 }, "configured_props.s"],
  ["object as an array", component({ o: { type: "object" } }), { o: [] }, "configured_props.o"],
  ["object as text", component({ o: { type: "object" } }), { o: "{}" }, "configured_props.o"],
  ["a single value for string[]", component({ l: { type: "string[]" } }), { l: "a" }, "configured_props.l"],
  ["a wrong item in string[]", component({ l: { type: "string[]" } }), { l: ["a", 1] }, "configured_props.l"],
  ["an integer[] item below min", component({ l: { type: "integer[]", min: 1 } }), { l: [1, 0] }, "configured_props.l"],
  ["not one of the options", component({ s: abc }), { s: "z" }, "configured_props.s"],
  ["an option's label instead of its value", component({ n: labelled }), { n: "One" }, "configured_props.n"],
  ["a list with a value outside the options", component({ l: { ...abc, type: "string[]" } }), { l: ["a", "z"] }, "configured_props.l"],
  ["a value over 64 KB", component({ s: { type: "string" } }), { s: "x".repeat(MAX_PROP_VALUE_BYTES - 1) }, "configured_props.s"],
  ["an unknown prop over 64 KB with additionalProps", component({}, { hasAdditionalProps: true }), { big: "x".repeat(MAX_PROP_VALUE_BYTES) }, "configured_props.big"],
  ["an empty data store name", component({ d: { type: "data_store" } }), { d: "" }, "configured_props.d"],
  ["a data store left out", component({ d: { type: "data_store" } }), {}, "configured_props.d"],
  ["an http request as a URL", component({ r: { type: "http_request" } }), { r: "https://x.test" }, "configured_props.r"],
  ["an http request with a numeric url", component({ r: { type: "http_request" } }), { r: { url: 5 } }, "configured_props.r"],
  ["timer interval 0", source({ timer }), { timer: { intervalSeconds: 0 } }, "configured_props.timer"],
  ["timer interval as text", source({ timer }), { timer: { intervalSeconds: "60" } }, "configured_props.timer"],
  ["timer cron of 4 fields", source({ timer }), { timer: { cron: "* * * *" } }, "configured_props.timer"],
  ["timer cron of 7 fields", source({ timer }), { timer: { cron: "* * * * * * *" } }, "configured_props.timer"],
  ["timer with both", source({ timer }), { timer: { intervalSeconds: 60, cron: "* * * * *" } }, "configured_props.timer"],
  ["timer with an unknown field", source({ timer }), { timer: { every: 60 } }, "configured_props.timer"],
  ["timer as a number", source({ timer }), { timer: 60 }, "configured_props.timer"],
  ["timer without value or default", source({ timer: { type: "$.interface.timer" } }), {}, "configured_props.timer"],
  ["a value for an http interface", source({ http: { type: "$.interface.http" } }), { http: { endpoint: "x" } }, "configured_props.http"],
  ["a value for db", source({ db: { type: "$.service.db" } }), { db: {} }, "configured_props.db"],
  ["a value for an app", source({ gh: { type: "app", app: "github" } }), { gh: { authProvisionId: "apn_1" } }, "configured_props.gh"],
];

describe("validateConfiguredProps", () => {
  it.each(PASSING)("accepts %s", (_rule, target, configured, stored) => {
    expect(validateConfiguredProps(target, configured)).toEqual(stored);
  });

  it("keeps declaration order in the stored object", () => {
    const stored = validateConfiguredProps(component({ b: { type: "string" }, a: { type: "string" } }), { a: "1", b: "2" });
    expect(Object.keys(stored)).toEqual(["b", "a"]);
  });

  it.each(FAILING)("rejects %s", (_rule, target, configured, field) => {
    expect(fieldOf(() => validateConfiguredProps(target, configured as Record<string, unknown>))).toBe(field);
  });

  it.each([
    [component({ t: { type: "string", optional: true } }), { u: 1 }, /Unknown prop "u"; this component's props are: t/],
    [component({ s: { type: "string", label: "Feed URL" } }), {}, /Prop "s" \(Feed URL\) is required: give it a string/],
    [component({ s: abc }), { s: "z" }, /"z" is not one of its options \("a", "b", "c"\)/],
    [component({ s: { type: "string" } }), { s: "x".repeat(70_000) }, /is 69 KB as JSON; a prop value may be at most 64 KB/],
    [source({ db: { type: "$.service.db" } }), { db: 1 }, /takes no value: the platform provides it/],
  ])("says what is wrong and what to do (%#)", (target, configured, message) => {
    expect(() => validateConfiguredProps(target, configured)).toThrow(message);
  });

  it("takes an app prop's connected account as { authProvisionId }, the form deploy payloads use, and keeps nothing else of the value", () => {
    const target = component({ github: { type: "app", app: "github" } });
    const id = newId("appAccount");
    expect(validateConfiguredProps(target, { github: { authProvisionId: id, extra: 1 } })).toEqual({ github: { authProvisionId: id } });
    expect(validateConfiguredProps(target, {})).toEqual({});
    expect(() => validateConfiguredProps(target, { github: { authProvisionId: "apn_nope" } })).toThrow(/takes a connected account as \{ "authProvisionId": "apn_…" \}; got authProvisionId a string/);
  });
});

describe("validateConfiguredProps for a workflow step's props", () => {
  const step = { field: "steps[1].props", step: "fetch" };
  const check = (target: ValidatedComponent, props: Record<string, unknown>) => validateConfiguredProps(target, props, step);

  it.each<[string, ValidatedComponent, Record<string, unknown>]>([
    ["an expression alone for an integer (known at run time)", component({ n: { type: "integer", min: 1 } }), { n: "{{steps.trigger.event.n}}" }],
    ["an expression alone outside the options", component({ s: abc }), { s: "{{steps.trigger.event.s}}" }],
    ["text with an expression for a string", component({ s: { type: "string" } }), { s: "id {{steps.trigger.event.id}}" }],
    ["an environment variable inside text", component({ s: { type: "string" } }), { s: "Bearer {{process.env.TOKEN}}" }],
    ["a data store named by text with an expression", component({ d: { type: "data_store" } }), { d: "cache-{{steps.a.region}}" }],
    ["list items that are expressions", component({ l: { type: "integer[]", max: 3 } }), { l: [1, "{{steps.a.n}}"] }],
    ["an object with expressions inside", component({ o: { type: "object" } }), { o: { id: "{{steps.a.id}}" } }],
    ["a required prop with a default left out", component({ n: { type: "integer", default: 5 } }), {}],
  ])("accepts %s", (_rule, target, props) => {
    expect(() => check(target, props)).not.toThrow();
  });

  it.each<[string, ValidatedComponent, Record<string, unknown>, RegExp]>([
    ["a wrong type", component({ n: { type: "integer" } }), { n: "five" }, /^Step "fetch": prop "n" must be a whole number; got a string\.$/],
    ["a required prop left out", component({ url: { type: "string" } }), {}, /^Step "fetch": prop "url" is required: give it a string\.$/],
    ["an unknown prop", component({ url: { type: "string" } }), { url: "x", urll: "y" }, /^Step "fetch": Unknown prop "urll"; its code's props are: url\.$/],
    ["below min", component({ n: { type: "integer", min: 2 } }), { n: 1 }, /^Step "fetch": prop "n" must be at least 2; got 1\.$/],
    ["above max", component({ n: { type: "integer", max: 2 } }), { n: 3 }, /^Step "fetch": prop "n" must be at most 2; got 3\.$/],
    ["outside the options", component({ s: abc }), { s: "z" }, /^Step "fetch": prop "s": "z" is not one of its options \("a", "b", "c"\)\.$/],
    ["a wrong array item", component({ l: { type: "string[]" } }), { l: ["a", 2] }, /^Step "fetch": prop "l" item 1 must be a string; got 2\.$/],
    ["a list item outside the options, beside an expression", component({ l: { ...abc, type: "string[]" } }), { l: ["{{steps.a.s}}", "z"] }, /"z" is not one of its options/],
    ["text with an expression for an integer", component({ n: { type: "integer" } }), { n: "n={{steps.a.n}}" }, /^Step "fetch": prop "n" must be a whole number, but text with a \{\{ \}\} expression inside always makes a string/],
    ["an app prop given something else than an account", component({ gh: { type: "app", app: "github" } }), { gh: "x" }, /^Step "fetch": prop "gh" \(app "github"\) takes a connected account as \{ "authProvisionId": "apn_…" \}/],
    ["a secret's wrong value, not shown", component({ k: { type: "string", secret: true, options: ["a"] } }), { k: "hunter2" }, /^Step "fetch": prop "k": the value given is not one of its options \(it is secret, so neither is shown\)\.$/],
  ])("refuses %s, naming the step and the prop", (_rule, target, props, message) => {
    expect(() => check(target, props)).toThrow(message);
    const field = fieldOf(() => check(target, props));
    expect(field.startsWith("steps[1].props.")).toBe(true);
  });
});
