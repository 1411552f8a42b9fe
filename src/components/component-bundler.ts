import { ValidationError } from "../domain/errors.js";
import type { PackageLock } from "../domain/package-lock.js";
import { bundleComponent, type ComponentBundle, type ComponentSource } from "./bundle.js";
import { lockedPackagesPlugin } from "./packages/locked-packages-plugin.js";
import type { PackageCache } from "./packages/package-cache.js";
import type { RegistryClient } from "./packages/registry-client.js";
import { resolveLock } from "./packages/resolve-lock.js";
import { rootRequests } from "./packages/root-requests.js";
import { parseImport, SpecifierError, type PackageImport } from "./packages/specifier.js";

export interface ComponentBundlerOptions {
  cache: PackageCache;
  registry: RegistryClient;
}

export interface BundleRequest {
  source: ComponentSource;
  /** The input field that 400s name (`component_code`, `component_url`). */
  field: string;
  /** Locks saved before, most relevant first (see resolveLock); their versions are kept where the code asks the same. */
  hints: readonly PackageLock[];
}

export interface BundledComponent {
  bundle: ComponentBundle;
  /** Null when the component imports no packages. */
  lock: PackageLock | null;
}

/**
 * The server's bundler: the component with its packages in one file that a
 * runner can load without reading anything else. Packages are found by a
 * first pass (fast: packages external), pinned into a lock, installed into
 * the shared cache, and bundled in by a second pass. A component without
 * packages is bundled once.
 */
export class ComponentBundler {
  constructor(private readonly options: ComponentBundlerOptions) {}

  async bundle(request: BundleRequest): Promise<BundledComponent> {
    try {
      return await this.bundleWithPackages(request);
    } catch (error) {
      // bundleComponent names the field of a plain deploy; the request knows the one the caller sent (`steps[1].code`).
      if (error instanceof ValidationError && error.field !== request.field && (error.field === "component_code" || error.field === "component_file")) {
        const { field: _field, ...details } = error.details ?? {};
        throw new ValidationError(request.field, error.message, details);
      }
      throw error;
    }
  }

  private async bundleWithPackages(request: BundleRequest): Promise<BundledComponent> {
    const first = await bundleComponent(request.source, { guardDynamicRequire: true });
    if (first.imports.length === 0) return { bundle: first, lock: null };
    const imports = first.imports.map((specifier) => parsed(specifier, request.field));
    const lock = await resolveLock({ roots: rootRequests(imports, request.field), hints: request.hints, registry: this.options.registry, field: request.field });
    const folders = await this.options.cache.installAll(lock);
    const cacheRoot = await this.options.cache.root();
    const bundle = await bundleComponent(request.source, {
      guardDynamicRequire: true,
      packages: { plugin: lockedPackagesPlugin({ lock, folders, cacheRoot }), cacheRoot },
    });
    return { bundle: { ...bundle, packages: first.packages, imports: first.imports }, lock };
  }
}

function parsed(specifier: string, field: string): PackageImport {
  try {
    return parseImport(specifier);
  } catch (error) {
    if (error instanceof SpecifierError) throw new ValidationError(field, `The import "${specifier}" cannot be resolved: ${error.message}`, { import: specifier });
    throw error;
  }
}
