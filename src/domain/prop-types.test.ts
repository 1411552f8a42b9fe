import { describe, expect, it } from "vitest";
import { PROP_TYPES, isAllowedIn, parsePropType, propKindOf, supportsArrays } from "./prop-types.js";

describe("parsePropType", () => {
  it.each([
    ["string", { base: "string", isArray: false }],
    ["string[]", { base: "string", isArray: true }],
    ["object[]", { base: "object", isArray: true }],
    ["$.interface.timer", { base: "$.interface.timer", isArray: false }],
    ["data_store", { base: "data_store", isArray: false }],
  ])("reads %s", (declared, expected) => {
    expect(parsePropType(declared)).toEqual(expected);
  });

  it.each([["number"], ["alert"], ["dir"], ["String"], ["string[][]"], ["[]"], [""]])("does not know %j", (declared) => {
    expect(parsePropType(declared)).toBeNull();
  });
});

describe("the type table", () => {
  // [type, kind, arrays, in sources, in actions], as SEED "Props" and API-COMPAT give them.
  it.each([
    ["app", "app", false, true, true],
    ["boolean", "input", true, true, true],
    ["integer", "input", true, true, true],
    ["string", "input", true, true, true],
    ["object", "input", false, true, true],
    ["any", "input", false, false, true],
    ["$.interface.http", "interface", false, true, false],
    ["$.interface.timer", "interface", false, true, false],
    ["$.service.db", "service", false, true, true],
    ["data_store", "service", false, true, true],
    ["http_request", "input", false, true, true],
  ] as const)("%s: %s, arrays %s, sources %s, actions %s", (type, kind, arrays, inSources, inActions) => {
    expect(propKindOf(type)).toBe(kind);
    expect(supportsArrays(type)).toBe(arrays);
    expect(isAllowedIn(type, "source")).toBe(inSources);
    expect(isAllowedIn(type, "action")).toBe(inActions);
  });

  it("covers every type", () => {
    expect(PROP_TYPES).toHaveLength(11);
  });
});
