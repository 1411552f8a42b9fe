/**
 * A source's row and its component as the invoker reads them on every batch,
 * kept: the row for a second while the source is busy, the component for good.
 */
import type { ValidatedComponent } from "../../domain/component-rules.js";
import { NotFoundError } from "../../domain/errors.js";
import type { DeployedSource, SavedComponent } from "../../domain/sources.js";
import type { Store } from "../../store/store.js";
import type { ComponentLoader } from "../component-loader.js";
import { ExpiringCache } from "../expiring-cache.js";

/** A source's saved component and its validated form. */
export interface SourceComponent {
  saved: SavedComponent;
  validated: ValidatedComponent;
}

/** How long a busy source's row is reused between batches. */
const SOURCE_CACHE_MS = 1_000;

export class SourceCache {
  /** Source rows, reused for a second while a source is busy (see fresh). */
  private readonly sources = new ExpiringCache<string, DeployedSource>({ ttlMs: SOURCE_CACHE_MS, maxEntries: 10_000 });
  private readonly components = new Map<string, SourceComponent>();

  constructor(
    private readonly store: Store,
    private readonly loader: ComponentLoader,
  ) {}

  /**
   * The source as stored, read at most once a second while it is busy: changes
   * made here (through `exclusive`) clear it at once, and so do another
   * process's (its "changed" message, see ChangesAcrossProcesses).
   */
  async fresh(ownerId: string, sourceId: string): Promise<DeployedSource> {
    const cached = this.sources.get(sourceId);
    if (cached?.ownerId === ownerId) return cached;
    const source = await this.sources.readThrough(sourceId, async () => {
      const found = await this.store.findSource(ownerId, sourceId);
      if (!found) throw new NotFoundError("source", sourceId);
      return found;
    });
    return source;
  }

  /** Forgets the source's row: the next batch reads it again. */
  forget(sourceId: string): void {
    this.sources.delete(sourceId);
  }

  /** The source's saved component and its validated form. */
  async componentOf(source: DeployedSource): Promise<SourceComponent> {
    // Saved components never change (new code is a new component), so they can be kept.
    const cached = this.components.get(source.componentId);
    if (cached && cached.saved.ownerId === source.ownerId) return cached;
    const saved = await this.store.findComponent(source.ownerId, source.componentId);
    if (!saved) throw new Error(`The component ${source.componentId} of source ${source.id} is missing.`);
    const component = { saved, validated: this.loader.validatedOf(saved) };
    if (this.components.size >= 1_000) this.components.clear();
    this.components.set(source.componentId, component);
    return component;
  }
}
