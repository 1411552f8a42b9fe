import { describe, expect, it } from "vitest";
import { ValidationError } from "../../domain/errors.js";
import type { PackageLock } from "../../domain/package-lock.js";
import type { Packument, PackumentVersion } from "./registry-client.js";
import { pickVersion, resolveLock } from "./resolve-lock.js";
import { rootRequests } from "./root-requests.js";
import { parseImport } from "./specifier.js";

type Extra = Omit<Partial<PackumentVersion>, "version" | "dist">;

/** A registry in memory: name → version → extra manifest fields; counts what was asked. */
function registryOf(packages: Record<string, Record<string, Extra>>, tags: Record<string, Record<string, string>> = {}) {
  const asked: string[] = [];
  return {
    asked,
    location: async () => "http://registry.test/",
    packument: async (name: string): Promise<Packument | null> => {
      asked.push(name);
      const versions = packages[name];
      if (!versions) return null;
      return {
        name,
        "dist-tags": { latest: Object.keys(versions).at(-1)!, ...tags[name] },
        versions: Object.fromEntries(
          Object.entries(versions).map(([version, extra]) => [version, { version, ...extra, dist: { tarball: `http://registry.test/${name}-${version}.tgz`, integrity: `sha512-${Buffer.from(name + version).toString("base64")}` } }]),
        ),
      };
    },
  };
}

const REGISTRY = {
  a: { "1.0.0": {}, "1.1.0": {}, "2.0.0": {}, "3.0.0-beta.1": {} },
  b: { "1.0.0": { dependencies: { a: "^1.0.0" } } },
  c: { "1.0.0": { dependencies: { a: "^2.0.0", opt: "^1", inside: "^1" }, optionalDependencies: { opt: "^1" }, bundleDependencies: ["inside"] } },
  d: { "1.0.0": { peerDependencies: { a: "*", gone: "^1" }, peerDependenciesMeta: { gone: { optional: true } } } },
  git: { "1.0.0": { dependencies: { a: "github:someone/a" } } },
};

const TAGS = { a: { latest: "2.0.0", beta: "9.9.9" } };

const resolve = (specifiers: string[], registry = registryOf(REGISTRY, TAGS), hints: PackageLock[] = []) =>
  resolveLock({ roots: rootRequests(specifiers.map(parseImport), "component_code"), hints, registry, field: "component_code" });

describe("resolveLock", () => {
  it("pins roots and each package's own dependencies", async () => {
    const lock = await resolve(["a", "b"]);
    expect(lock.roots).toEqual({ a: "a@2.0.0", b: "b@1.0.0" });
    expect(lock.packages["b@1.0.0"]!.dependencies).toEqual({ a: "1.1.0" });
    expect(Object.keys(lock.packages)).toEqual(["a@1.1.0", "a@2.0.0", "b@1.0.0"]);
  });

  it("shares a version the lock has when it satisfies a dependency", async () => {
    const lock = await resolve(["a@^1", "b"]);
    expect(Object.keys(lock.packages)).toEqual(["a@1.1.0", "b@1.0.0"]);
  });

  it("skips optional and bundled dependencies, and resolves required peers", async () => {
    const lock = await resolve(["c", "d"]);
    expect(lock.packages["c@1.0.0"]!.dependencies).toEqual({ a: "2.0.0" });
    expect(lock.packages["d@1.0.0"]!.dependencies).toEqual({ a: "2.0.0" });
  });

  it("keeps what a hint holds for the same request, and asks the registry only about the rest", async () => {
    const registry = registryOf(REGISTRY, TAGS);
    const hint = await resolve(["a@^1", "b"]);
    const lock = await resolve(["a@^1", "b", "d"], registry, [hint]);
    expect(registry.asked).toEqual(["d"]);
    expect(lock.roots).toEqual({ "a@^1": "a@1.1.0", b: "b@1.0.0", d: "d@1.0.0" });
    expect(lock.packages["d@1.0.0"]!.dependencies).toEqual({ a: "1.1.0" });
  });

  it("ignores an incomplete hint", async () => {
    const registry = registryOf(REGISTRY, TAGS);
    const broken: PackageLock = { roots: { b: "b@1.0.0" }, packages: { "b@1.0.0": { integrity: "sha512-x", tarball: "t", dependencies: { a: "1.0.0" } } } };
    const lock = await resolve(["b"], registry, [broken]);
    expect(registry.asked).toEqual(["b", "a"]);
    expect(lock.packages["b@1.0.0"]!.dependencies).toEqual({ a: "1.1.0" });
  });

  it.each([
    [["nope"], /The package "nope" \(imported as "nope"\) does not exist in the registry http:\/\/registry\.test\//],
    [["a@^5"], /No version of "a" matches "\^5"/],
    [["a@beta"], /No version of "a" matches "beta"/],
    [["git"], /git@1\.0\.0 depends on "a@github:someone\/a", which is not a registry version/],
  ])("refuses %j", async (specifiers, message) => {
    const error = await resolve(specifiers).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(message);
  });
});

describe("pickVersion", () => {
  const document = { name: "a", "dist-tags": { latest: "1.1.0", next: "3.0.0-beta.1" }, versions: Object.fromEntries(["1.0.0", "1.1.0", "2.0.0", "3.0.0-beta.1"].map((v) => [v, { version: v, dist: { tarball: "" } }])) };
  it.each([
    [null, "1.1.0"],
    ["next", "3.0.0-beta.1"],
    ["^1", "1.1.0"],
    ["*", "1.1.0"],
    [">=1", "1.1.0"],
    ["^2", "2.0.0"],
    ["1.0.0", "1.0.0"],
    ["^4", null],
  ])("%s → %s (latest wins when it satisfies, as with npm)", (range, version) => expect(pickVersion(document, range)).toBe(version));
});
