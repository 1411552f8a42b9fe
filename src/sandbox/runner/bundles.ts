/**
 * The bundles a runner keeps loaded. A runner serves one owner, and keeps
 * many of that owner's components warm at once, each in its own module scope
 * (its own module-level state), so that an owner's hundreds of components
 * share a few processes instead of starting one each.
 *
 * The least recently used bundle no call is using is unloaded when more
 * than `maxLoaded` are loaded, or when the heap is past half of its limit
 * (checked every few loads: the heap shrinks only after a collection).
 * Unloading drops the module from require's cache; the next call loads it
 * afresh, as a new runner would.
 */
import { createRequire } from "node:module";
import { getHeapStatistics } from "node:v8";
import type { SandboxError } from "../sandbox-error.js";
import { InvalidComponentError, requireBundle, toComponent, type Component } from "./component.js";

export type Loaded = { component: Component } | { error: SandboxError };

/**
 * A workflow bundle: `module.exports = { [WORKFLOW_STEPS]: [() => exports of step 0, …] }`
 * (see engine/workflows/workflow-bundle.ts). Each step loads on its first call.
 */
const WORKFLOW_STEPS = "__runnelWorkflowSteps";

/** Loads between two looks at the heap. */
const HEAP_CHECK_EVERY = 16;
/** Past this share of the heap limit, the least recently used half of the idle bundles is unloaded. */
const HEAP_SHARE = 0.5;

export interface LoadedBundlesOptions {
  maxLoaded: number;
  describe(thrown: unknown): SandboxError;
}

/** One bundle as loaded: its module (required once), its component, and a workflow bundle's steps. */
export class LoadedBundle {
  /** Calls running this bundle's code now: a bundle in use is never unloaded. */
  inUse = 0;
  private module: { exported: unknown } | { error: SandboxError } | undefined;
  private loaded: Loaded | undefined;
  private readonly steps = new Map<number, Loaded>();

  constructor(
    readonly file: string,
    private readonly describe: (thrown: unknown) => SandboxError,
  ) {}

  /** The bundle's component; a failure is kept, as the module is (requiring again would run its top-level code again). */
  component(): Loaded {
    if (this.loaded) return this.loaded;
    const module = this.requireOnce();
    if ("error" in module) return (this.loaded = module);
    try {
      this.loaded = { component: toComponent(module.exported) };
    } catch (thrown) {
      this.loaded = { error: this.describe(thrown) };
    }
    return this.loaded;
  }

  /** A step of a workflow bundle. */
  step(index: number): Loaded {
    const cached = this.steps.get(index);
    if (cached) return cached;
    const module = this.requireOnce();
    if ("error" in module) return module;
    const factories = (module.exported as Record<string, unknown> | null)?.[WORKFLOW_STEPS];
    const factory = Array.isArray(factories) ? factories[index] : undefined;
    let loaded: Loaded;
    if (typeof factory !== "function") {
      loaded = { error: { code: "InvalidComponent", name: "InvalidComponent", message: `The workflow bundle has no step ${index}.` } };
    } else {
      try {
        loaded = { component: toComponent(factory()) };
      } catch (thrown) {
        loaded = { error: this.describe(thrown instanceof InvalidComponentError ? thrown : new InvalidComponentError(`The step's code failed to load: ${describeLoadFailure(thrown)}`)) };
      }
    }
    this.steps.set(index, loaded);
    return loaded;
  }

  /** Forgets the module, so that nothing of ours holds it and the next require runs it afresh. */
  unload(): void {
    try {
      delete createRequire(this.file).cache[this.file];
    } catch {
      // Nothing was cached (the file never loaded): nothing to drop.
    }
    this.module = undefined;
    this.loaded = undefined;
    this.steps.clear();
  }

  private requireOnce(): { exported: unknown } | { error: SandboxError } {
    if (this.module) return this.module;
    try {
      this.module = { exported: requireBundle(this.file) };
    } catch (thrown) {
      this.module = { error: this.describe(thrown) };
    }
    return this.module;
  }
}

export class LoadedBundles {
  /** In order of use, the least recent first (a Map keeps insertion order; a use moves the bundle to the end). */
  private readonly bundles = new Map<string, LoadedBundle>();
  private loadsSinceHeapCheck = 0;

  constructor(private readonly options: LoadedBundlesOptions) {}

  /** The bundle at `file`, marked in use until `release`. */
  use(file: string): LoadedBundle {
    let bundle = this.bundles.get(file);
    if (bundle) {
      this.bundles.delete(file);
    } else {
      bundle = new LoadedBundle(file, this.options.describe);
      this.loadsSinceHeapCheck += 1;
    }
    this.bundles.set(file, bundle);
    bundle.inUse += 1;
    this.makeRoom();
    return bundle;
  }

  release(bundle: LoadedBundle): void {
    bundle.inUse -= 1;
  }

  /** The loaded bundle whose file a stack trace names, for a fault that no call owns. */
  named(stack: string | undefined): string | undefined {
    if (!stack) return undefined;
    for (const file of this.bundles.keys()) if (stack.includes(file)) return file;
    return undefined;
  }

  private makeRoom(): void {
    let excess = this.bundles.size - this.options.maxLoaded;
    if (this.loadsSinceHeapCheck >= HEAP_CHECK_EVERY) {
      this.loadsSinceHeapCheck = 0;
      const heap = getHeapStatistics();
      if (heap.used_heap_size > heap.heap_size_limit * HEAP_SHARE) excess = Math.max(excess, Math.floor(this.bundles.size / 2));
    }
    if (excess <= 0) return;
    for (const [file, bundle] of this.bundles) {
      if (excess <= 0) break;
      if (bundle.inUse > 0) continue;
      bundle.unload();
      this.bundles.delete(file);
      excess -= 1;
    }
  }
}

function describeLoadFailure(thrown: unknown): string {
  return thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
}
