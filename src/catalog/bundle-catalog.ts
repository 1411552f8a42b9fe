import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleComponent, type ComponentBundle } from "../components/bundle.js";

/** The repository's root (from src/catalog or dist/catalog alike): the catalog and Runnel's own node_modules are under it. */
export const REPOSITORY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The folder of the first-party catalog's component files (`catalog/<app>/{sources,actions}/<slug>/<slug>.mjs`). */
export const CATALOG_ROOT = resolve(REPOSITORY_ROOT, "catalog");

/**
 * One catalog component compiled to a self-contained CommonJS bundle: its
 * relative imports (the app file, `catalog/common/`) and the packages it
 * imports are bundled in from Runnel's own node_modules (they are Runnel's
 * dependencies, installed by `npm ci`), so publishing the catalog never asks
 * the npm registry for anything, and a server without network has it whole.
 */
export async function bundleCatalogComponent(path: string): Promise<ComponentBundle> {
  return bundleComponent(
    { kind: "file", path: resolve(CATALOG_ROOT, path) },
    // No plugin of ours: esbuild resolves package imports from the repository's node_modules, as for any file there.
    { packages: { plugin: { name: "runnel-dependencies", setup: () => undefined }, cacheRoot: REPOSITORY_ROOT } },
  );
}
