import type { Plugin } from "esbuild";
import { isAbsolute, join, resolve, sep } from "node:path";
import { nameOfLockKey, type PackageLock } from "../../domain/package-lock.js";
import { isBuiltinImport, parseImport, splitPackagePath } from "./specifier.js";

export interface LockedPackagesOptions {
  lock: PackageLock;
  /** Lock key → its folder in the package cache (real path). */
  folders: ReadonlyMap<string, string>;
  /** The cache's real path. */
  cacheRoot: string;
}

/** Marks the plugin's own calls to esbuild's resolver, which must not come back to the plugin. */
const DIRECT = { lockedPackagesPlugin: true };

interface Owner {
  key: string;
  /** `<cache>/<integrity key>`: everything of this package, bundled dependencies included. */
  folder: string;
  /** The importer is a file of a dependency bundled inside the package's tarball. */
  inBundledDependency: boolean;
}

/**
 * Resolves bare imports through the lock: the component's own imports through
 * its roots, a package's imports through that package's resolved
 * dependencies. Each package sits in the cache as `<folder>/node_modules/<name>`,
 * so esbuild itself reads its `exports`, `main` and subpaths once told which
 * folder. Node's own modules stay external.
 */
export function lockedPackagesPlugin(options: LockedPackagesOptions): Plugin {
  const rootByName = new Map(Object.values(options.lock.roots).map((key) => [nameOfLockKey(key), key]));
  const keyByFolder = new Map([...options.folders].map(([key, folder]) => [folder, key]));
  const cachePrefix = options.cacheRoot + sep;

  const ownerOf = (importer: string): Owner | null => {
    if (!importer.startsWith(cachePrefix)) return null;
    const parts = importer.slice(cachePrefix.length).split(sep);
    const folder = join(options.cacheRoot, parts[0]!);
    const key = keyByFolder.get(folder);
    if (!key) return null;
    const nameParts = nameOfLockKey(key).startsWith("@") ? 2 : 1;
    return { key, folder, inBundledDependency: parts.slice(2 + nameParts).includes("node_modules") };
  };

  return {
    name: "locked-packages",
    setup(build) {
      // Imports inside a package must stay inside it: a package must not bundle
      // other files of this machine into a component. Only `..` and absolute
      // paths can leave (the cache holds no links), and each check costs a
      // round trip to esbuild, so `./` imports are not checked.
      build.onResolve({ filter: /^(?:\.\.(?:\/|$)|\/)/ }, (args) => {
        const owner = ownerOf(args.importer);
        if (!owner) return undefined;
        const target = isAbsolute(args.path) ? args.path : resolve(args.resolveDir, args.path);
        if (target === owner.folder || target.startsWith(owner.folder + sep)) return undefined;
        return { errors: [{ text: `${owner.key} imports "${args.path}", which is outside the package; it cannot be bundled.` }] };
      });

      build.onResolve({ filter: /^[^./#]/ }, async (args) => {
        if (args.pluginData === DIRECT) return undefined;
        if (isBuiltinImport(args.path)) return { path: args.path, external: true };
        const owner = ownerOf(args.importer);
        let name: string;
        let subpath: string;
        let key: string | undefined;
        if (!owner) {
          ({ name, subpath } = parseImport(args.path));
          key = rootByName.get(name);
          if (!key) return { errors: [{ text: `"${args.path}" was not resolved before bundling; deploy again.` }] };
        } else {
          ({ name, subpath } = splitPackagePath(args.path));
          key = dependencyOf(owner.key, name);
          if (!key || owner.inBundledDependency) {
            // A dependency bundled in the tarball sits in the package's own node_modules.
            const own = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: DIRECT });
            if (own.errors.length === 0 && own.path.startsWith(owner.folder + sep)) return { path: own.path, sideEffects: own.sideEffects };
          }
          // Undeclared (or optional) dependencies: the component's own version if it has one…
          key ??= rootByName.get(name);
          // …else left out; requiring it fails at run time, which packages that try optional modules expect.
          if (!key) return { path: args.path, external: true };
        }
        const folder = options.folders.get(key)!;
        const found = await build.resolve(name + subpath, { resolveDir: folder, kind: args.kind, pluginData: DIRECT });
        if (found.errors.length > 0) {
          const where = owner ? `${owner.key} imports "${args.path}"` : `The import "${args.path}"`;
          return { errors: [{ text: `${where}, but ${key} has no such module: ${found.errors[0]!.text}` }] };
        }
        return { path: found.path, sideEffects: found.sideEffects };
      });
    },
  };

  function dependencyOf(ownerKey: string, name: string): string | undefined {
    if (nameOfLockKey(ownerKey) === name) return ownerKey; // a package importing itself by name
    const version = options.lock.packages[ownerKey]?.dependencies[name];
    return version === undefined ? undefined : `${name}@${version}`;
  }
}
