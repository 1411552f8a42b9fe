import { createHash } from "node:crypto";
import type { ComponentBundler } from "../components/component-bundler.js";
import { isAppFileManifest } from "../domain/app-files.js";
import { isLinkedBundle, linkAppBundles, unboundAppProps, type BundlePart, type LinkedBundle } from "./app-linking.js";
import type { ComponentManifest } from "../domain/component-manifest.js";
import { validateComponent, type ValidatedComponent } from "../domain/component-rules.js";
import { ValidationError } from "../domain/errors.js";
import { newId } from "../domain/ids.js";
import type { SavedComponent } from "../domain/sources.js";
import { singleBundleMaps } from "../sandbox/stack-mapping.js";
import type { ComponentBundle as RunnerBundle, Sandbox } from "../sandbox/sandbox.js";
import type { Store } from "../store/store.js";
import type { BundleFiles } from "./bundle-files.js";
import { fetchComponentCode } from "./fetch-component.js";

/** Where a component's code comes from in an API request. */
export interface ComponentInput {
  component_code?: string | undefined;
  component_url?: string | undefined;
  /** The file name the code came from, so that `.ts` and `.mjs` are read as such. */
  filename?: string | undefined;
}

export interface LoadedComponent {
  component: SavedComponent;
  validated: ValidatedComponent;
}

export interface ComponentLoaderOptions {
  store: Store;
  sandbox: Sandbox;
  bundleFiles: BundleFiles;
  /** Bundles code with its packages, resolved through the registry and the package cache. */
  bundler: ComponentBundler;
  now?: () => number;
}

/** App code (`type: "app"`) as bundled and described by a runner: published on its own, never saved as a component. */
export interface LoadedAppCode {
  code: string;
  codeHash: string;
  bundle: string;
  bundleHash: string;
  bundleMap: string | null;
  manifest: ComponentManifest;
}

export interface SaveOptions {
  /** The component being replaced (an update): its package versions are kept where the new code asks the same. */
  previous?: SavedComponent | null | undefined;
  /** A workflow's code step: validated as an action that may leave out name and version. */
  asStep?: boolean;
  /** Names the field errors point at (`steps[1].code`) instead of component_code / component_url. */
  field?: string;
}

/**
 * Turns code into a saved component: bundle it, let a sandbox runner load it
 * and describe it (the server never runs user code), validate the description
 * against the component rules, and save it.
 */
export class ComponentLoader {
  private readonly validatedCache = new Map<string, ValidatedComponent>();
  /** What code bundled to in this process: `<code hash> <file name>` → bundle hash. */
  private readonly bundledCache = new Map<string, string>();
  private readonly now: () => number;

  constructor(private readonly options: ComponentLoaderOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Packages: the same code saved before keeps its lock (redeploying is
   * repeatable, and needs no registry); otherwise the previous version's lock
   * keeps what the new code asks the same, and the rest is resolved afresh.
   * Everything that can fail (registry, bundling, loading) happens before
   * anything is stored, so a failed update leaves the source as it was.
   */
  async save(ownerId: string, input: ComponentInput, options: SaveOptions = {}): Promise<LoadedComponent> {
    const loaded = await this.load(ownerId, input, options);
    if ("app" in loaded) {
      const field = options.field ?? (input.component_code !== undefined ? "component_code" : "component_url");
      throw new ValidationError(
        field,
        'This is an app file (type: "app"), not a component: an app is not deployed or run on its own. Publish it with `runnel publish <file>` (POST /v1/components/registry), and use it from a component through an app prop.',
      );
    }
    return loaded;
  }

  /**
   * As `save`, except that app code (`type: "app"`) is answered as
   * `{ app }`, bundled and described but not saved: the registry publishes it
   * on its own.
   */
  async load(ownerId: string, input: ComponentInput, options: SaveOptions = {}): Promise<LoadedComponent | { app: LoadedAppCode }> {
    const field = options.field ?? (input.component_code !== undefined ? "component_code" : "component_url");
    const code = input.component_code ?? (input.component_url !== undefined ? await fetchComponentCode(input.component_url) : undefined);
    if (code === undefined || code.trim() === "") {
      throw new ValidationError(field, "Give the component's code in component_code, or a URL to it in component_url.");
    }
    const codeHash = createHash("sha256").update(code).digest("hex");
    const filename = input.filename ?? urlFilename(input.component_url);
    const recipe = `${codeHash} ${filename ?? ""}`;
    const same = await this.options.store.findComponentByCode(ownerId, codeHash);
    // The same code under the same name bundles, with the lock it saved, to the
    // same bytes: a redeploy this process has bundled before skips bundling.
    const candidate = same && (same.kind === "action") === Boolean(options.asStep) ? same : null;
    // A saved component linked to (or waiting for) a published app is not reused as it is: the app may have a new version.
    const reusable = candidate && !(await this.hasRegistryApps(ownerId, candidate)) ? candidate : null;
    if (reusable && this.bundledCache.get(recipe) === reusable.bundleHash) return { component: reusable, validated: this.validatedOf(reusable) };
    const hints = [same?.lock, options.previous?.lock].filter((lock) => lock != null);
    const bundled = await this.options.bundler.bundle({ source: { kind: "code", code, filename }, field, hints });
    const lock = bundled.lock;
    let bundle: { code: string; hash: string; map: string | null } = bundled.bundle;
    if (this.bundledCache.size >= 10_000) this.bundledCache.clear();
    this.bundledCache.set(recipe, bundle.hash);
    // A component saved before maps were kept goes on to be saved again: the store gives the saved one its map.
    if (reusable && reusable.bundleHash === bundle.hash && reusable.bundleMap !== null) {
      // Saved before, byte for byte: the store would return that one anyway, so skip loading it in a runner again.
      return { component: reusable, validated: this.validatedOf(reusable) };
    }
    let inspected = await this.inspectBundle(ownerId, bundle, field);
    if (isAppFileManifest(inspected.manifest) && !options.asStep) {
      return { app: { code, codeHash, bundle: bundle.code, bundleHash: bundle.hash, bundleMap: bundle.map, manifest: inspected.manifest } };
    }
    const linked = await this.linkRegistryApps(ownerId, bundle, inspected.manifest);
    if (linked) {
      bundle = linked;
      inspected = await this.inspectBundle(ownerId, bundle, field);
    }
    const validated = validateComponent(inspected.manifest, { asStep: Boolean(options.asStep) });
    const at = this.now();
    const component = await this.options.store.saveComponent({
      id: newId("savedComponent", at),
      ownerId,
      name: validated.name,
      version: validated.version,
      key: validated.key,
      kind: validated.kind,
      code,
      codeHash,
      bundle: bundle.code,
      bundleHash: bundle.hash,
      bundleMap: bundle.map,
      lock,
      manifest: inspected.manifest,
      createdAt: at,
      updatedAt: at,
    });
    this.validatedCache.set(component.id, validated);
    return { component, validated };
  }

  /** Loads a bundle in a sandbox runner and describes it; a failure is a 400 naming the code's field. */
  private async inspectBundle(ownerId: string, bundle: { code: string; hash: string; map: string | null }, field: string): Promise<{ manifest: ComponentManifest }> {
    const file = await this.options.bundleFiles.fileFor(bundle.hash, () => bundle.code);
    const inspected = await this.options.sandbox.inspect({ id: bundle.hash, ownerId, file, sourceMaps: singleBundleMaps(bundle.map) });
    if (!inspected.ok) {
      throw new ValidationError(field, `The component could not be loaded: ${inspected.error.message}`, { cause: inspected.error.code });
    }
    return inspected;
  }

  /** Whether the saved component was linked to published apps, or names one it could be linked to now (app-linking.ts). */
  private async hasRegistryApps(ownerId: string, saved: SavedComponent): Promise<boolean> {
    // Once linked, its props carry the app's methods: only its bundle tells.
    if (isLinkedBundle(saved.bundle)) return true;
    for (const { slug } of unboundAppProps(saved.manifest)) if (await this.options.store.findPublishedApp(ownerId, slug)) return true;
    return false;
  }

  /**
   * The component's bundle with the owner's published apps linked in, for
   * each inline app prop that carries no methods or propDefinitions and
   * names a published app (its newest release); null when there is none.
   */
  private async linkRegistryApps(ownerId: string, bundle: BundlePart, manifest: ComponentManifest): Promise<LinkedBundle | null> {
    const apps: Array<{ prop: string; bundle: BundlePart }> = [];
    for (const { prop, slug } of unboundAppProps(manifest)) {
      const published = await this.options.store.findPublishedApp(ownerId, slug);
      if (published) apps.push({ prop, bundle: { code: published.bundle, map: published.bundleMap } });
    }
    return apps.length > 0 ? linkAppBundles(bundle, apps) : null;
  }

  /** The validated form of a saved component (validation is pure, so it is cached by id). */
  validatedOf(component: SavedComponent): ValidatedComponent {
    let validated = this.validatedCache.get(component.id);
    if (!validated) {
      // Actions are validated as steps: a code step saved without name or version stays valid when read back.
      validated = validateComponent(component.manifest, { asStep: component.kind === "action" });
      this.validatedCache.set(component.id, validated);
    }
    return validated;
  }

  /** The bundle as a runner loads it: a file on this machine, written on first use. */
  async runnerBundle(component: SavedComponent): Promise<RunnerBundle> {
    const file = await this.options.bundleFiles.fileFor(component.bundleHash, () => component.bundle);
    return { id: component.bundleHash, ownerId: component.ownerId, file, sourceMaps: singleBundleMaps(component.bundleMap) };
  }
}

function urlFilename(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const last = new URL(url).pathname.split("/").pop();
    return last && /\.(m?[jt]s|cjs|cts)$/.test(last) ? last : undefined;
  } catch {
    return undefined;
  }
}
