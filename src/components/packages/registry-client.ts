import { RegistryUnavailableError } from "../../domain/errors.js";
import { matchesIntegrity } from "./integrity.js";

/** The fields of a package document that resolution reads (npm's abbreviated "corgi" form has them all). */
export interface Packument {
  name: string;
  "dist-tags"?: Record<string, string>;
  versions: Record<string, PackumentVersion>;
}

export interface PackumentVersion {
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  bundleDependencies?: string[] | boolean;
  bundledDependencies?: string[] | boolean;
  dist: { tarball: string; integrity?: string; shasum?: string };
}

export interface RegistryClientOptions {
  /** Where the registry is, found lazily (see registryLocator). */
  registryUrl: () => Promise<string>;
  timeoutMs?: number;
}

/** npm's abbreviated metadata: a fraction of the full document, and all an installer needs. */
const PACKUMENT_ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*";

/**
 * Reads package documents and tarballs from an npm registry. Anything short
 * of an answer (refused, timed out, a 5xx, a tarball that does not match its
 * integrity) is a RegistryUnavailableError naming the package and the registry.
 */
export class RegistryClient {
  private readonly timeoutMs: number;

  constructor(private readonly options: RegistryClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  location(): Promise<string> {
    return this.options.registryUrl();
  }

  /** The package's document, or null when the registry has no such package. */
  async packument(name: string): Promise<Packument | null> {
    const registry = await this.location();
    // Scoped names keep their @ and encode the slash, as npm requests them.
    const url = `${registry}${name.replace("/", "%2f")}`;
    const response = await this.request(url, name, registry, { accept: PACKUMENT_ACCEPT });
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    await this.expectOk(response, name, registry);
    try {
      const document = (await response.json()) as Packument;
      if (!document || typeof document.versions !== "object") throw new Error("no versions in it");
      return document;
    } catch (error) {
      throw unavailable(registry, name, `its answer is not a package document (${(error as Error).message})`);
    }
  }

  /** A tarball's bytes, checked against the integrity the lock holds. */
  async tarball(key: string, tarball: string, integrity: string): Promise<Buffer> {
    const registry = await this.location();
    const response = await this.request(tarball, key, registry, {});
    await this.expectOk(response, key, registry);
    const bytes = Buffer.from(await response.arrayBuffer());
    if (!matchesIntegrity(bytes, integrity)) {
      throw unavailable(registry, key, `the tarball ${tarball} does not match its integrity ${integrity}, so it was not installed`);
    }
    return bytes;
  }

  private async request(url: string, what: string, registry: string, headers: Record<string, string>): Promise<Response> {
    try {
      return await fetch(url, { headers, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw unavailable(registry, what, describeFetchError(error, this.timeoutMs));
    }
  }

  private async expectOk(response: Response, what: string, registry: string): Promise<void> {
    if (response.ok) return;
    await response.body?.cancel();
    const hint = response.status === 401 || response.status === 403 ? " (Runnel sends no registry credentials)" : "";
    throw unavailable(registry, what, `it answered ${response.status} ${response.statusText}${hint}`);
  }
}

function unavailable(registry: string, what: string, why: string): RegistryUnavailableError {
  return new RegistryUnavailableError(
    `Could not get "${what}" from the package registry ${registry}: ${why}. Nothing was changed, and a deployed source keeps running its current code. Try again, or set RUNNEL_NPM_REGISTRY to a registry this server can reach.`,
    { package: what, registry },
  );
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return `no answer within ${timeoutMs / 1000} s`;
  // undici hides the socket's error (ECONNREFUSED, ENOTFOUND…) in `cause`.
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
