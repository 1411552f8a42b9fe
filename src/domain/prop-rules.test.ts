import { describe, expect, it } from "vitest";
import { validateProp } from "./prop-rules.js";
import type { ComponentKind } from "./prop-types.js";
import { validationFieldOf as fieldOf } from "../../test/helpers/validation.js";

const fn = { $fn: true };

// [rule, declared prop, component kind]
const PASSING: Array<[string, unknown, ComponentKind]> = [
  ["short form of a type", "$.service.db", "source"],
  ["plain string", { type: "string" }, "source"],
  ["string[]", { type: "string[]" }, "action"],
  ["integer[]", { type: "integer[]" }, "source"],
  ["boolean[]", { type: "boolean[]" }, "source"],
  ["any in an action", { type: "any" }, "action"],
  ["http interface in a source", { type: "$.interface.http", customResponse: true }, "source"],
  ["timer interface in a source", { type: "$.interface.timer" }, "source"],
  ["db in an action", { type: "$.service.db" }, "action"],
  ["data_store in both", { type: "data_store" }, "action"],
  ["http_request", { type: "http_request" }, "action"],
  ["label and description", { type: "string", label: "URL", description: "The **feed** URL" }, "source"],
  ["optional flag", { type: "string", optional: false }, "source"],
  ["secret string", { type: "string", secret: true }, "source"],
  ["secret: false anywhere", { type: "integer", secret: false }, "source"],
  ["min and max on an integer", { type: "integer", min: 1, max: 10 }, "source"],
  ["min equal to max", { type: "integer", min: 5, max: 5 }, "source"],
  ["min on integer[]", { type: "integer[]", min: 0 }, "source"],
  ["options of values", { type: "string", options: ["a", 1, true] }, "source"],
  ["options with labels", { type: "integer", options: [{ label: "One", value: 1 }, "2"] }, "source"],
  ["options method", { type: "string", options: fn }, "source"],
  ["app prop", { type: "app", app: "github", propDefinitions: {}, methods: ["getRepos"] }, "action"],
  ["default on an optional prop", { type: "string", optional: true, default: "x" }, "source"],
  ["default on an optional string[]", { type: "string[]", optional: true, default: ["a"] }, "source"],
  ["default within min/max", { type: "integer", optional: true, min: 1, max: 100, default: 20 }, "source"],
  ["timer default interval, not optional", { type: "$.interface.timer", default: { intervalSeconds: 900 } }, "source"],
  ["timer default cron", { type: "$.interface.timer", default: { cron: "0 0 * * *" } }, "source"],
  ["data_store default name", { type: "data_store", optional: true, default: "cache" }, "source"],
  ["default on a required prop (it stands in when none is configured)", { type: "integer", default: 5 }, "action"],
  ["default on a required http_request", { type: "http_request", default: { method: "GET", url: "https://example.com" } }, "action"],
  ["hidden, disabled, reloadProps", { type: "string", hidden: true, disabled: false, reloadProps: true }, "source"],
  ["fields it does not know", { type: "string", useQuery: true, propDefinition: ["app", "x"] }, "source"],
];

// [rule, declared prop, component kind, field named]
const FAILING: Array<[string, unknown, ComponentKind, string]> = [
  ["not an object", 5, "source", "props.p"],
  ["an array", [], "source", "props.p"],
  ["no type", { label: "x" }, "source", "props.p.type"],
  ["empty type", { type: "" }, "source", "props.p.type"],
  ["unknown type", { type: "number" }, "source", "props.p.type"],
  ["alert is not supported", { type: "alert" }, "action", "props.p.type"],
  ["dir is not supported", { type: "dir" }, "action", "props.p.type"],
  ["object[]", { type: "object[]" }, "source", "props.p.type"],
  ["any[]", { type: "any[]" }, "action", "props.p.type"],
  ["timer[]", { type: "$.interface.timer[]" }, "source", "props.p.type"],
  ["any in a source", { type: "any" }, "source", "props.p.type"],
  ["http interface in an action", { type: "$.interface.http" }, "action", "props.p.type"],
  ["timer interface in an action", { type: "$.interface.timer" }, "action", "props.p.type"],
  ["label not a string", { type: "string", label: 5 }, "source", "props.p.label"],
  ["description not a string", { type: "string", description: ["x"] }, "source", "props.p.description"],
  ["optional not a boolean", { type: "string", optional: "yes" }, "source", "props.p.optional"],
  ["secret not a boolean", { type: "string", secret: "yes" }, "source", "props.p.secret"],
  ["secret on an integer", { type: "integer", secret: true }, "source", "props.p.secret"],
  ["secret on string[]", { type: "string[]", secret: true }, "source", "props.p.secret"],
  ["min on a string", { type: "string", min: 1 }, "source", "props.p.min"],
  ["max on a boolean", { type: "boolean", max: 1 }, "source", "props.p.max"],
  ["min not a whole number", { type: "integer", min: 1.5 }, "source", "props.p.min"],
  ["max as text", { type: "integer", max: "10" }, "source", "props.p.max"],
  ["min above max", { type: "integer", min: 10, max: 1 }, "source", "props.p.min"],
  ["options as text", { type: "string", options: "a,b" }, "source", "props.p.options"],
  ["an option without label", { type: "string", options: [{ value: "a" }] }, "source", "props.p.options"],
  ["an option without value", { type: "string", options: [{ label: "A" }] }, "source", "props.p.options"],
  ["a null option", { type: "string", options: [null] }, "source", "props.p.options"],
  ["a nested array option", { type: "string", options: [["a"]] }, "source", "props.p.options"],
  ["app prop without app", { type: "app" }, "source", "props.p.app"],
  ["default of the wrong type on a required prop", { type: "string", default: 1 }, "source", "props.p.default"],
  ["default of the wrong type", { type: "integer", optional: true, default: "10" }, "source", "props.p.default"],
  ["default below min", { type: "integer", optional: true, min: 5, default: 1 }, "source", "props.p.default"],
  ["default not a list for string[]", { type: "string[]", optional: true, default: "a" }, "source", "props.p.default"],
  ["default as a function", { type: "object", optional: true, default: fn }, "source", "props.p.default"],
  ["timer default that is not a timer", { type: "$.interface.timer", default: "15m" }, "source", "props.p.default"],
  ["timer default interval 0", { type: "$.interface.timer", default: { intervalSeconds: 0 } }, "source", "props.p.default"],
  ["default on an http interface", { type: "$.interface.http", default: {} }, "source", "props.p.default"],
  ["default on db", { type: "$.service.db", optional: true, default: {} }, "source", "props.p.default"],
  ["default on an app", { type: "app", app: "github", optional: true, default: "x" }, "source", "props.p.default"],
  ["customResponse not a boolean", { type: "$.interface.http", customResponse: "yes" }, "source", "props.p.customResponse"],
  ["hidden not a boolean", { type: "string", hidden: 1 }, "source", "props.p.hidden"],
  ["disabled not a boolean", { type: "string", disabled: "no" }, "source", "props.p.disabled"],
  ["reloadProps not a boolean", { type: "string", reloadProps: null }, "source", "props.p.reloadProps"],
];

describe("validateProp", () => {
  it.each(PASSING)("accepts: %s", (_rule, declared, kind) => {
    expect(validateProp("p", declared, kind).name).toBe("p");
  });

  it.each(FAILING)("rejects: %s", (_rule, declared, kind, field) => {
    expect(fieldOf(() => validateProp("p", declared, kind))).toBe(field);
  });

  it("normalizes a prop, leaving out fields that were not given", () => {
    expect(validateProp("limit", { type: "integer", label: "Limit", optional: true, min: 1, default: 10, options: [10, 20] }, "action")).toEqual({
      name: "limit",
      type: "integer",
      baseType: "integer",
      isArray: false,
      kind: "input",
      label: "Limit",
      optional: true,
      default: 10,
      secret: false,
      min: 1,
      options: [10, 20],
      remoteOptions: false,
      customResponse: false,
      hidden: false,
      disabled: false,
      reloadProps: false,
    });
  });

  it("normalizes a timer default given in the API's echo form", () => {
    const prop = validateProp("timer", { type: "$.interface.timer", default: { interval_seconds: 60, cron: null } }, "source");
    expect(prop.default).toEqual({ intervalSeconds: 60 });
  });

  it("marks an options method as remote options", () => {
    const prop = validateProp("repo", { type: "string", options: fn }, "source");
    expect(prop.remoteOptions).toBe(true);
    expect(prop.options).toBeUndefined();
  });

  it("says what to do in its messages", () => {
    expect(() => validateProp("p", { type: "integer", default: "x" }, "source")).toThrow(/default must be a whole number/);
    expect(() => validateProp("p", { type: "any" }, "source")).toThrow(/only allowed in actions/);
  });
});
