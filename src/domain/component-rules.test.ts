import { describe, expect, it } from "vitest";
import type { ComponentManifest, PropManifest } from "./component-manifest.js";
import { toConfigurableProps, validateComponent } from "./component-rules.js";
import { validationFieldOf as fieldOf } from "../../test/helpers/validation.js";

const manifest = (over: Partial<ComponentManifest> = {}): ComponentManifest => ({
  name: "New item",
  version: "0.0.1",
  props: {},
  methods: [],
  hooks: [],
  hasRun: true,
  hasAdditionalProps: false,
  ...over,
});
const action = (over: Partial<ComponentManifest> = {}) => manifest({ type: "action", ...over });
const timer = { type: "$.interface.timer", default: { intervalSeconds: 900 } };

const PASSING: Array<[string, ComponentManifest]> = [
  ["a minimal source", manifest()],
  ["type source", manifest({ type: "source" })],
  ["type action", action()],
  ["an HTTP source without run (a plain endpoint)", manifest({ hasRun: false, props: { http: { type: "$.interface.http" } } })],
  ["a key", manifest({ key: "github-new-issue" })],
  ["a key with _ and digits", manifest({ key: "1x_y-2" })],
  ["a description", manifest({ description: "Emits new items" })],
  ["dedupe unique", manifest({ dedupe: "unique" })],
  ["dedupe greatest", manifest({ dedupe: "greatest" })],
  ["dedupe last", manifest({ dedupe: "last" })],
  ["all hooks on a source", manifest({ hooks: ["deploy", "activate", "deactivate"] })],
  ["a source with a timer and no run", manifest({ hasRun: false, props: { timer } })],
  ["a version that is not semver", manifest({ version: "v2 beta" })],
  ["props and methods with other names", manifest({ props: { url: { type: "string" } }, methods: ["fetch"] })],
];

const FAILING: Array<[string, ComponentManifest, string]> = [
  ["no name", manifest({ name: undefined }), "name"],
  ["an empty name", manifest({ name: "  " }), "name"],
  ["a name that is not a string", manifest({ name: 5 }), "name"],
  ["no version", manifest({ version: undefined }), "version"],
  ["a numeric version", manifest({ version: 1 }), "version"],
  ["an empty version", manifest({ version: "" }), "version"],
  ["an unknown type", manifest({ type: "workflow" }), "type"],
  ["a type in capitals", manifest({ type: "Source" }), "type"],
  ["a null type", manifest({ type: null }), "type"],
  ["a key in capitals", manifest({ key: "GitHub-new" }), "key"],
  ["a key starting with -", manifest({ key: "-x" }), "key"],
  ["a key with a space", manifest({ key: "a b" }), "key"],
  ["an empty key", manifest({ key: "" }), "key"],
  ["a numeric key", manifest({ key: 5 }), "key"],
  ["a description that is not a string", manifest({ description: 5 }), "description"],
  ["an unknown dedupe", manifest({ dedupe: "newest" }), "dedupe"],
  ["an empty dedupe", manifest({ dedupe: "" }), "dedupe"],
  ["dedupe on an action", action({ dedupe: "unique" }), "dedupe"],
  ["hooks on an action", action({ hooks: ["activate"] }), "hooks"],
  ["an unknown hook", manifest({ hooks: ["onDeploy"] }), "hooks"],
  ["a source without run, timer or HTTP interface", manifest({ hasRun: false, props: { name: { type: "string" } } }), "run"],
  ["an action without run", action({ hasRun: false }), "run"],
  ["props that are not an object", manifest({ props: [] as unknown as ComponentManifest["props"] }), "props"],
  ["a prop named like a method", manifest({ props: { fetch: { type: "string" } }, methods: ["fetch"] }), "props.fetch"],
  ["a bad prop", manifest({ props: { ok: { type: "string" }, bad: { type: "strin" } } }), "props.bad.type"],
  ["a timer in an action", action({ props: { timer } }), "props.timer.type"],
];

describe("validateComponent", () => {
  it.each(PASSING)("accepts %s", (_rule, definition) => {
    expect(validateComponent(definition).name).toBe("New item");
  });

  it.each(FAILING)("rejects %s", (_rule, definition, field) => {
    expect(fieldOf(() => validateComponent(definition))).toBe(field);
  });

  it("normalizes a component, props in declaration order", () => {
    const result = validateComponent(
      manifest({
        key: "rss-new-item",
        dedupe: "unique",
        // The short form `db: "$.service.db"` is outside PropManifest's type, but existing components use it.
        props: { db: "$.service.db" as unknown as PropManifest, url: { type: "string", label: "Feed URL" }, timer },
        methods: ["fetch"],
        hooks: ["activate"],
        hasRun: true,
      }),
    );
    expect({ ...result, props: result.props.map((prop) => prop.name) }).toEqual({
      kind: "source",
      name: "New item",
      version: "0.0.1",
      key: "rss-new-item",
      description: null,
      dedupe: "unique",
      props: ["db", "url", "timer"],
      hooks: ["activate"],
      methods: ["fetch"],
      hasRun: true,
      hasAdditionalProps: false,
    });
  });

  it("names the rule in its messages", () => {
    expect(() => validateComponent(action({ dedupe: "unique" }))).toThrow(/dedupe is only for sources/);
    expect(() => validateComponent(manifest({ hasRun: false }))).toThrow(/needs a run method.*\$\.interface\.timer/);
  });
});

describe("toConfigurableProps", () => {
  it("shows a timer as the hosted API does", () => {
    const component = validateComponent(manifest({ hasRun: false, props: { timer } }));
    expect(toConfigurableProps(component)).toEqual([{ name: "timer", type: "$.interface.timer", default: { intervalSeconds: 900 } }]);
  });

  it.each([
    ["a plain prop: name and type only", { type: "string" }, { name: "p", type: "string" }],
    ["label and description", { type: "string", label: "L", description: "D" }, { name: "p", type: "string", label: "L", description: "D" }],
    ["options method as remoteOptions", { type: "string", options: { $fn: true } }, { name: "p", type: "string", remoteOptions: true }],
    ["static options as declared", { type: "string", options: ["a", { label: "B", value: "b" }] }, { name: "p", type: "string", options: ["a", { label: "B", value: "b" }] }],
    ["optional with default", { type: "integer", optional: true, default: 5, min: 1, max: 9 }, { name: "p", type: "integer", optional: true, default: 5, min: 1, max: 9 }],
    ["false flags left out", { type: "string", optional: false, secret: false, hidden: false }, { name: "p", type: "string" }],
    ["true flags shown", { type: "string", secret: true, hidden: true, disabled: true, reloadProps: true }, { name: "p", type: "string", secret: true, hidden: true, disabled: true, reloadProps: true }],
    ["an app prop", { type: "app", app: "github", propDefinitions: {} }, { name: "p", type: "app", app: "github" }],
    ["an app prop with its label", { type: "app", app: "github", label: "Work account", description: "D", propDefinitions: {} }, { name: "p", type: "app", app: "github", label: "Work account", description: "D" }],
    ["an http interface", { type: "$.interface.http", customResponse: true }, { name: "p", type: "$.interface.http", customResponse: true }],
  ])("%s", (_title, declared, expected) => {
    const component = validateComponent(manifest({ props: { p: declared } }));
    expect(toConfigurableProps(component)).toEqual([expected]);
  });
});

describe("validateComponent as a workflow step", () => {
  it("takes a code step without name, version or type as an action", () => {
    const step = validateComponent({ ...manifest(), name: undefined, version: undefined, type: undefined, props: { any: { type: "any" } } } as ComponentManifest, { asStep: true });
    expect(step).toMatchObject({ kind: "action", name: "Code step", version: "0.0.0" });
  });

  it("refuses a step that says it is a source", () => {
    expect(() => validateComponent(manifest({ type: "source" }), { asStep: true })).toThrow(/runs as an action/);
  });
});
