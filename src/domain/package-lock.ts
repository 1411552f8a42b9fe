/**
 * What a component's package imports resolved to, saved with the component so
 * that deploying the same code again bundles the very same package versions.
 */
export interface PackageLock {
  /** `"<name>@<version>"` → the package as installed. */
  packages: Record<string, LockedPackage>;
  /**
   * One entry per package the component imports itself: the request, without
   * subpath (`"leftpad@^1"`, or `"leftpad"` for the latest), → `"<name>@<version>"`.
   */
  roots: Record<string, string>;
}

export interface LockedPackage {
  /** Subresource integrity of the tarball (`sha512-…`, base64), the key of the package cache. */
  integrity: string;
  tarball: string;
  /** The package's own dependencies as resolved: name → version (a key of `packages` is `name@version`). */
  dependencies: Record<string, string>;
}

/** `leftpad@1.2.3`, `@scope/pkg@1.0.0`. */
export function lockKey(name: string, version: string): string {
  return `${name}@${version}`;
}

/** The name of a lock key: the part before the last `@` (a scope's `@` comes first). */
export function nameOfLockKey(key: string): string {
  return key.slice(0, key.lastIndexOf("@"));
}
