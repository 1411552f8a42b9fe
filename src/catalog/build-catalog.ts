import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { DYNAMIC_REQUIRE_GUARD_LINES, withDynamicRequireGuard } from "../components/dynamic-require.js";
import type { ComponentManifest } from "../domain/component-manifest.js";
import { validateComponent } from "../domain/component-rules.js";
import { checkRegistryKey, checkRegistryVersion } from "../domain/registry.js";
import { bundleCatalogComponent, CATALOG_ROOT } from "./bundle-catalog.js";
import { listCatalogFiles, type CatalogFile } from "./catalog-files.js";
import { describeCatalogCode } from "./describe-catalog-code.js";

/** A catalog component ready to publish: its code, the bundle a runner loads, and its manifest. */
export interface BuiltCatalogComponent {
  path: string;
  key: string;
  version: string;
  kind: "source" | "action";
  name: string;
  description: string | null;
  /** What is published as the component's code: bundleCatalogComponent's output. */
  code: string;
  codeHash: string;
  /** The code with the dynamic-require guard every server bundle starts with. */
  bundle: string;
  bundleHash: string;
  bundleMap: string;
  manifest: ComponentManifest;
}

/** A catalog file that could not be made into a component, and why. */
export interface CatalogFailure {
  path: string;
  /** The key, when the file got far enough to say it. */
  key: string | null;
  message: string;
}

/** The whole catalog as built: dist/catalog/manifest.json holds one. */
export interface BuiltCatalog {
  /** Of the inputs (see catalogFingerprint): the same inputs build the same catalog. */
  fingerprint: string;
  components: BuiltCatalogComponent[];
  failures: CatalogFailure[];
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * Bundles and describes every component file under the catalog folder. A
 * file that fails (does not compile or load, breaks a component rule, or
 * has a key other than `<app>-<slug>` of its folder) is listed in
 * `failures` with the reason; the others are built.
 */
export async function buildCatalog(fingerprint: string, root: string = CATALOG_ROOT): Promise<BuiltCatalog> {
  const components: BuiltCatalogComponent[] = [];
  const failures: CatalogFailure[] = [];
  const files = listCatalogFiles(root);
  // A few at a time: esbuild works in its own threads, and the machine is shared.
  for (let start = 0; start < files.length; start += 4) {
    const built = await Promise.all(files.slice(start, start + 4).map((file) => buildOne(file, root)));
    for (const result of built) {
      if ("message" in result) failures.push(result);
      else components.push(result);
    }
  }
  const seen = new Map<string, string>();
  const unique = components.filter((component) => {
    const first = seen.get(component.key);
    if (first === undefined) return seen.set(component.key, component.path), true;
    failures.push({ path: component.path, key: component.key, message: `The key ${component.key} is taken already by ${first}: each catalog component needs a key of its own.` });
    return false;
  });
  return { fingerprint, components: unique, failures };
}

async function buildOne(file: CatalogFile, root: string): Promise<BuiltCatalogComponent | CatalogFailure> {
  let key: string | null = null;
  try {
    const bundle = await bundleCatalogComponent(resolve(root, file.path));
    const manifest = describeCatalogCode(bundle.code, resolve(root, file.path));
    key = typeof manifest.key === "string" ? manifest.key : null;
    const validated = validateComponent(manifest);
    checkRegistryKey(validated.key, validated.name);
    checkRegistryVersion(validated.version);
    const expected = `${file.app}-${file.slug}`;
    if (validated.key !== expected) {
      throw new Error(`Its key is ${JSON.stringify(validated.key)}, but its folder says ${expected}: a catalog component's key is <app>-<folder slug>. Rename the folder and file, or change the key.`);
    }
    const guarded = withDynamicRequireGuard(bundle.code);
    return {
      path: file.path,
      key: validated.key,
      version: validated.version,
      kind: validated.kind,
      name: validated.name,
      description: validated.description,
      code: bundle.code,
      codeHash: sha256(bundle.code),
      bundle: guarded,
      bundleHash: sha256(guarded),
      bundleMap: shiftMap(bundle.map, DYNAMIC_REQUIRE_GUARD_LINES),
      manifest,
    };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const field = (error as { field?: unknown }).field;
    return { path: file.path, key, message: typeof field === "string" ? `${field}: ${detail}` : detail };
  }
}

/** The source map of the code, for the bundle that has `lines` more lines at the top (the guard). */
function shiftMap(map: string, lines: number): string {
  const parsed = JSON.parse(map) as { mappings?: string };
  return JSON.stringify({ ...parsed, mappings: ";".repeat(lines) + (parsed.mappings ?? "") });
}
