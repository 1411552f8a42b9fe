import { describe, expect, it } from "vitest";
import { ValidationError } from "../../domain/errors.js";
import { rootRequests } from "./root-requests.js";
import { isBuiltinImport, parseImport, splitPackagePath, SpecifierError } from "./specifier.js";

describe("parseImport", () => {
  it.each([
    ["leftpad", "leftpad", null, ""],
    ["leftpad@1.2.3", "leftpad", "1.2.3", ""],
    ["leftpad@^1", "leftpad", "^1", ""],
    ["leftpad@~1.1.0", "leftpad", "~1.1.0", ""],
    ["leftpad@next", "leftpad", "next", ""],
    ["leftpad@>=1 <2", "leftpad", ">=1 <2", ""],
    ["lodash/get", "lodash", null, "/get"],
    ["lodash@^4/fp/get", "lodash", "^4", "/fp/get"],
    ["@scope/pkg", "@scope/pkg", null, ""],
    ["@scope/pkg/sub", "@scope/pkg", null, "/sub"],
    ["@scope/pkg@^1", "@scope/pkg", "^1", ""],
    ["@scope/pkg@^1/sub/deep.js", "@scope/pkg", "^1", "/sub/deep.js"],
    ["JSONStream", "JSONStream", null, ""],
  ])("%s → %s %s %s", (specifier, name, range, subpath) => {
    expect(parseImport(specifier)).toEqual({ specifier, name, range, subpath });
  });

  it.each([
    ["@scope"],
    ["leftpad@"],
    ["leftpad@/sub"],
    ["leftpad@^^1"],
    ["@scope/pkg@1.2.3.4.5"],
    ["left pad"],
    [".hidden"],
    ["leftpad/../secrets"],
    ["leftpad@1/./x"],
  ])("refuses %s", (specifier) => {
    expect(() => parseImport(specifier)).toThrow(SpecifierError);
  });
});

describe("isBuiltinImport", () => {
  it.each([
    ["fs", true],
    ["node:fs", true],
    ["fs/promises", true],
    ["node:test", true],
    ["leftpad", false],
    ["@pipedream/platform", false],
  ])("%s → %s", (specifier, builtin) => expect(isBuiltinImport(specifier)).toBe(builtin));
});

describe("splitPackagePath", () => {
  it.each([
    ["lodash", "lodash", ""],
    ["lodash/get", "lodash", "/get"],
    ["@scope/pkg", "@scope/pkg", ""],
    ["@scope/pkg/sub/path", "@scope/pkg", "/sub/path"],
  ])("%s → %s %s", (specifier, name, subpath) => expect(splitPackagePath(specifier)).toEqual({ name, subpath }));
});

describe("rootRequests", () => {
  const requests = (...specifiers: string[]) => rootRequests(specifiers.map(parseImport), "component_code");

  it("asks once per package, and an unpinned import follows the pin", () => {
    expect(requests("lodash/get", "lodash@^4", "leftpad", "@s/p@1/x", "@s/p@1")).toEqual([
      { name: "@s/p", range: "1", key: "@s/p@1", specifier: "@s/p@1/x" },
      { name: "leftpad", range: null, key: "leftpad", specifier: "leftpad" },
      { name: "lodash", range: "^4", key: "lodash@^4", specifier: "lodash@^4" },
    ]);
  });

  it("refuses two different pins of one package, naming both", () => {
    const error = (() => {
      try {
        requests("leftpad@1.0.0", "leftpad", "leftpad@^2");
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toContain('"leftpad@1.0.0" and "leftpad@^2"');
    expect((error as ValidationError).details).toMatchObject({ field: "component_code", package: "leftpad" });
  });
});
