import { createHash } from "node:crypto";
import { bundleComponent } from "../components/bundle.js";
import { validateComponent, type ValidatedComponent } from "../domain/component-rules.js";
import { ValidationError } from "../domain/errors.js";
import { newId } from "../domain/ids.js";
import type { SavedComponent } from "../domain/sources.js";
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
  now?: () => number;
}

/**
 * Turns code into a saved component: bundle it, let a sandbox runner load it
 * and describe it (the server never runs user code), validate the description
 * against the component rules, and save it.
 */
export class ComponentLoader {
  private readonly validatedCache = new Map<string, ValidatedComponent>();
  private readonly now: () => number;

  constructor(private readonly options: ComponentLoaderOptions) {
    this.now = options.now ?? Date.now;
  }

  async save(ownerId: string, input: ComponentInput): Promise<LoadedComponent> {
    const field = input.component_code !== undefined ? "component_code" : "component_url";
    const code = input.component_code ?? (input.component_url !== undefined ? await fetchComponentCode(input.component_url) : undefined);
    if (code === undefined || code.trim() === "") {
      throw new ValidationError(field, "Give the component's code in component_code, or a URL to it in component_url.");
    }
    const bundle = await bundleComponent({ kind: "code", code, filename: input.filename ?? urlFilename(input.component_url) });
    const file = await this.options.bundleFiles.fileFor(bundle.hash, () => bundle.code);
    const inspected = await this.options.sandbox.inspect({ id: bundle.hash, ownerId, file });
    if (!inspected.ok) {
      throw new ValidationError(field, `The component could not be loaded: ${inspected.error.message}`, { cause: inspected.error.code });
    }
    const validated = validateComponent(inspected.manifest);
    const at = this.now();
    const component = await this.options.store.saveComponent({
      id: newId("savedComponent", at),
      ownerId,
      name: validated.name,
      version: validated.version,
      key: validated.key,
      kind: validated.kind,
      code,
      codeHash: createHash("sha256").update(code).digest("hex"),
      bundle: bundle.code,
      bundleHash: bundle.hash,
      manifest: inspected.manifest,
      createdAt: at,
      updatedAt: at,
    });
    this.validatedCache.set(component.id, validated);
    return { component, validated };
  }

  /** The validated form of a saved component (validation is pure, so it is cached by id). */
  validatedOf(component: SavedComponent): ValidatedComponent {
    let validated = this.validatedCache.get(component.id);
    if (!validated) {
      validated = validateComponent(component.manifest);
      this.validatedCache.set(component.id, validated);
    }
    return validated;
  }

  /** The bundle as a runner loads it: a file on this machine, written on first use. */
  async runnerBundle(component: SavedComponent): Promise<RunnerBundle> {
    const file = await this.options.bundleFiles.fileFor(component.bundleHash, () => component.bundle);
    return { id: component.bundleHash, ownerId: component.ownerId, file };
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
