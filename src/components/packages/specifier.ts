import { isBuiltin } from "node:module";
import semver from "semver";

/**
 * A package import in component code: `name[@range][/subpath]`, as the seed
 * lets sources pin versions in the import string (`axios@^1.6`,
 * `@scope/pkg@~2/sub`). Imports inside packages never carry pins: they are
 * plain npm names, read with `splitPackagePath`.
 */
export interface PackageImport {
  /** As written: `@scope/pkg@^1/sub`. */
  specifier: string;
  name: string;
  /** `1.2.3`, `^1`, `~1.2`, `>=2 <3`, or a dist-tag such as `next`; null: the latest. */
  range: string | null;
  /** `""`, or the path inside the package with its leading slash (`/get`). */
  subpath: string;
}

/** The import string cannot name a package; the message says why, for the 400. */
export class SpecifierError extends Error {
  override readonly name = "SpecifierError";
}

// npm's rules for new names are stricter (lower case); old packages such as JSONStream keep capitals.
const NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/i;
const TAG = /^[a-z][a-z0-9._-]*$/i;

/** Node's own modules (`fs`, `node:fs`, `fs/promises`): never packages. */
export function isBuiltinImport(specifier: string): boolean {
  return specifier.startsWith("node:") || isBuiltin(specifier);
}

/** Reads `name[@range][/subpath]`; throws SpecifierError for a string that is not a package import. */
export function parseImport(specifier: string): PackageImport {
  const scopeEnd = specifier.startsWith("@") ? specifier.indexOf("/") + 1 : 0;
  if (specifier.startsWith("@") && scopeEnd === 0) throw new SpecifierError(`"${specifier}" has a scope but no package name; write it as @scope/name.`);
  const rest = specifier.slice(scopeEnd);
  const at = rest.indexOf("@");
  const slash = rest.indexOf("/");
  let name: string;
  let range: string | null = null;
  let subpath: string;
  if (at >= 0 && (slash < 0 || at < slash)) {
    name = specifier.slice(0, scopeEnd) + rest.slice(0, at);
    const pinned = rest.slice(at + 1);
    const end = pinned.indexOf("/");
    range = (end < 0 ? pinned : pinned.slice(0, end)).trim();
    subpath = end < 0 ? "" : pinned.slice(end);
    if (range === "") throw new SpecifierError(`"${specifier}" has nothing after the @; pin a version (name@1.2.3), a range (name@^1) or leave the @ out for the latest.`);
    if (semver.validRange(range) === null && !TAG.test(range)) {
      throw new SpecifierError(`"${range}" in "${specifier}" is not a version, a range (^1.2, ~1.2.3, >=2 <3) or a dist-tag.`);
    }
  } else {
    name = specifier.slice(0, scopeEnd) + (slash < 0 ? rest : rest.slice(0, slash));
    subpath = slash < 0 ? "" : rest.slice(slash);
  }
  if (!NAME.test(name) || name.length > 214) throw new SpecifierError(`"${specifier}" does not name an npm package ("${name}" is not a valid package name).`);
  checkSubpath(specifier, subpath);
  return { specifier, name, range, subpath };
}

/** Imports inside a package: `name` and `name/sub/path`, scoped or not, without pins. */
export function splitPackagePath(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split("/");
  const nameParts = specifier.startsWith("@") ? 2 : 1;
  return { name: parts.slice(0, nameParts).join("/"), subpath: parts.length > nameParts ? `/${parts.slice(nameParts).join("/")}` : "" };
}

/** The key of a root in a lock: what the component asked for, without subpath. */
export function rootKey(request: { name: string; range: string | null }): string {
  return request.range === null ? request.name : `${request.name}@${request.range}`;
}

function checkSubpath(specifier: string, subpath: string): void {
  // A subpath is a path inside the package; `..` would reach other files of the package cache.
  if (subpath.includes("\\") || subpath.split("/").some((part) => part === ".." || part === ".")) {
    throw new SpecifierError(`"${specifier}" leaves its package; a subpath must be a path inside the package, without "." or ".." parts.`);
  }
}
