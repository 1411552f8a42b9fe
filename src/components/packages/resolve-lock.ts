import semver from "semver";
import { ValidationError } from "../../domain/errors.js";
import { lockKey, nameOfLockKey, type LockedPackage, type PackageLock } from "../../domain/package-lock.js";
import { integrityOf } from "./integrity.js";
import type { Packument, PackumentVersion, RegistryClient } from "./registry-client.js";
import type { RootRequest } from "./root-requests.js";

export interface ResolveLockOptions {
  roots: readonly RootRequest[];
  /**
   * Locks saved before (the same code's, then the previous version's): a root
   * they hold keeps its versions, so a redeploy or an update asks the registry
   * only about what changed.
   */
  hints: readonly PackageLock[];
  registry: Pick<RegistryClient, "packument" | "location">;
  /** The input field named by 400s. */
  field: string;
}

/** Resolves a component's package imports, and their dependencies, to exact versions. */
export function resolveLock(options: ResolveLockOptions): Promise<PackageLock> {
  return new LockResolver(options).run();
}

const TAG = /^[a-z][a-z0-9._-]*$/i;

/** A package resolved here rather than copied from a hint: its dependencies are still to resolve. */
interface Pending {
  key: string;
  manifest: PackumentVersion;
}

class LockResolver {
  private readonly lock: PackageLock = { packages: {}, roots: {} };
  private readonly documents = new Map<string, Promise<Packument | null>>();
  private pending: Pending[] = [];

  constructor(private readonly options: ResolveLockOptions) {}

  async run(): Promise<PackageLock> {
    const fresh = this.options.roots.filter((root) => !this.rootFromHints(root));
    await Promise.all(fresh.map((root) => this.document(root.name)));
    for (const root of fresh) {
      const document = await this.document(root.name);
      if (!document) throw await this.notFound(root.name, `imported as "${root.specifier}"`);
      const version = pickVersion(document, root.range);
      if (!version) throw noVersion(this.options.field, document, root.range ?? "latest", `imported as "${root.specifier}"`);
      this.lock.roots[root.key] = this.add(document, version);
    }
    while (this.pending.length > 0) {
      const wave = this.pending;
      this.pending = [];
      await this.resolveDependencies(wave);
    }
    return sorted(this.lock);
  }

  private rootFromHints(root: RootRequest): boolean {
    for (const hint of this.options.hints) {
      const key = hint.roots[root.key];
      if (key && this.copyClosure(hint, key)) {
        this.lock.roots[root.key] = key;
        return true;
      }
    }
    return false;
  }

  /** Copies a package and everything it depends on from a hint; false (and nothing copied) when the hint is incomplete. */
  private copyClosure(hint: PackageLock, key: string): boolean {
    const closure = new Map<string, LockedPackage>();
    const stack = [key];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (closure.has(next) || this.lock.packages[next]) continue;
      const entry = hint.packages[next];
      if (!entry) return false;
      closure.set(next, entry);
      for (const [name, version] of Object.entries(entry.dependencies)) stack.push(lockKey(name, version));
    }
    for (const [next, entry] of closure) this.lock.packages[next] = { ...entry, dependencies: { ...entry.dependencies } };
    return true;
  }

  private async resolveDependencies(wave: Pending[]): Promise<void> {
    const wanted = wave.flatMap(({ key, manifest }) => dependenciesOf(manifest).map(([name, range]) => ({ parent: key, name, range })));
    for (const dependency of wanted) {
      if (semver.validRange(dependency.range) === null && !TAG.test(dependency.range)) {
        throw new ValidationError(
          this.options.field,
          `${dependency.parent} depends on "${dependency.name}@${dependency.range}", which is not a registry version; Runnel installs packages from the registry only.`,
          { package: dependency.parent, dependency: dependency.name },
        );
      }
    }
    const toFetch = wanted.filter((dependency) => !this.existing(dependency.name, dependency.range));
    await Promise.all(toFetch.map((dependency) => this.document(dependency.name)));
    for (const { parent, name, range } of wanted) {
      let key = this.existing(name, range);
      if (!key) {
        const document = await this.document(name);
        const neededBy = `a dependency of ${parent}`;
        if (!document) throw await this.notFound(name, neededBy);
        const version = pickVersion(document, range);
        if (!version) throw noVersion(this.options.field, document, range, neededBy);
        key = this.add(document, version);
      }
      this.lock.packages[parent]!.dependencies[name] = key.slice(name.length + 1);
    }
  }

  /** A version already in the lock, or in a hint, that satisfies the range: the highest, as npm dedupes. */
  private existing(name: string, range: string): string | null {
    const inLock = highestSatisfying(Object.keys(this.lock.packages), name, range);
    if (inLock) return inLock;
    for (const hint of this.options.hints) {
      const hinted = highestSatisfying(Object.keys(hint.packages), name, range);
      if (hinted && this.copyClosure(hint, hinted)) return hinted;
    }
    return null;
  }

  private add(document: Packument, version: string): string {
    const key = lockKey(document.name, version);
    if (this.lock.packages[key]) return key;
    const manifest = document.versions[version]!;
    const integrity = integrityOf(manifest.dist);
    if (!integrity) {
      throw new ValidationError(this.options.field, `${key} has no integrity hash in the registry, so it cannot be installed safely.`, { package: key });
    }
    this.lock.packages[key] = { integrity, tarball: manifest.dist.tarball, dependencies: {} };
    this.pending.push({ key, manifest });
    return key;
  }

  private document(name: string): Promise<Packument | null> {
    let document = this.documents.get(name);
    if (!document) {
      document = this.options.registry.packument(name).then((found) => (found ? { ...found, name } : null));
      this.documents.set(name, document);
    }
    return document;
  }

  private async notFound(name: string, context: string): Promise<ValidationError> {
    const registry = await this.options.registry.location();
    return new ValidationError(
      this.options.field,
      `The package "${name}" (${context}) does not exist in the registry ${registry}. Check its name, or set RUNNEL_NPM_REGISTRY to the registry that has it.`,
      { package: name, registry },
    );
  }
}

/** The version a request picks: a dist-tag, or the highest satisfying the range, preferring `latest` as npm does. */
export function pickVersion(document: Packument, range: string | null): string | null {
  const tags = document["dist-tags"] ?? {};
  const versions = Object.keys(document.versions);
  const tagged = (tag: string) => (tags[tag] && document.versions[tags[tag]] ? tags[tag] : null);
  if (range === null) return tagged("latest") ?? semver.maxSatisfying(versions, "*");
  if (TAG.test(range) && tagged(range)) return tagged(range);
  if (semver.validRange(range) === null) return null;
  const latest = tagged("latest");
  if (latest && semver.satisfies(latest, range)) return latest;
  return semver.maxSatisfying(versions, range);
}

/**
 * What a package needs installed with it. Optional dependencies are left out:
 * they are mostly native builds for one platform, and a package must run
 * without them. Bundled ones ship inside its tarball. Peers are resolved like
 * dependencies (npm 7+ installs them too) and share a version the lock already
 * has when it satisfies them.
 */
function dependenciesOf(manifest: PackumentVersion): Array<[string, string]> {
  const bundled = new Set(bundledNames(manifest));
  const optional = manifest.optionalDependencies ?? {};
  const wanted = new Map<string, string>();
  for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
    if (!(name in optional) && !bundled.has(name)) wanted.set(name, range);
  }
  for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
    if (!manifest.peerDependenciesMeta?.[name]?.optional && !wanted.has(name) && !bundled.has(name)) wanted.set(name, range);
  }
  return [...wanted].sort(([a], [b]) => a.localeCompare(b));
}

export function bundledNames(manifest: Pick<PackumentVersion, "bundleDependencies" | "bundledDependencies" | "dependencies">): string[] {
  const list = manifest.bundleDependencies ?? manifest.bundledDependencies;
  if (list === true) return Object.keys(manifest.dependencies ?? {});
  return Array.isArray(list) ? list : [];
}

function highestSatisfying(keys: string[], name: string, range: string): string | null {
  const versions = keys.filter((key) => nameOfLockKey(key) === name).map((key) => key.slice(name.length + 1));
  const best = TAG.test(range) && semver.validRange(range) === null ? null : semver.maxSatisfying(versions, range);
  return best ? lockKey(name, best) : null;
}

function noVersion(field: string, document: Packument, range: string, context: string): ValidationError {
  const published = Object.keys(document.versions).sort(semver.compare);
  const latest = document["dist-tags"]?.latest ?? published.at(-1) ?? "none";
  const listed = published.length > 12 ? `…, ${published.slice(-12).join(", ")}` : published.join(", ");
  return new ValidationError(
    field,
    `No version of "${document.name}" matches "${range}" (${context}). The latest is ${latest}; published: ${listed || "none"}. Pin a published version or a range that includes one.`,
    { package: document.name, range, latest },
  );
}

function sorted(lock: PackageLock): PackageLock {
  const byKey = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const packages = byKey(lock.packages);
  for (const entry of Object.values(packages)) entry.dependencies = byKey(entry.dependencies);
  return { packages, roots: byKey(lock.roots) };
}
