import semver from "semver";
import { ConflictError, NotFoundError } from "../domain/errors.js";
import { checkRegistryKey, checkRegistryVersion, type RegistryEntry } from "../domain/registry.js";
import type { Store } from "../store/store.js";
import type { ComponentInput, ComponentLoader, LoadedComponent } from "./component-loader.js";

export interface RegistryServiceOptions {
  store: Store;
  loader: ComponentLoader;
  now?: () => number;
}

/** A published version with the component it is. */
export interface PublishedComponent {
  entry: RegistryEntry;
  component: LoadedComponent;
}

/**
 * The user's component registry: publish an action or a source under its
 * `key` and semantic `version`, and resolve a key (at a version, or the
 * newest) to the saved component, for deploys and workflow steps. Entries
 * live in the publisher's namespace; another user's keys are never seen.
 */
export class RegistryService {
  private readonly now: () => number;

  constructor(private readonly options: RegistryServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Saves the code as a component (bundled, loaded in a sandbox runner and
   * validated, as POST /v1/components does), checks the registry rules
   * (ValidationError naming `key` or `version`), then publishes it.
   * Publishing a version again with the same code returns the existing entry
   * (`created: false`); with other code it is a ConflictError: versions are
   * immutable, bump it.
   */
  async publish(ownerId: string, input: ComponentInput): Promise<PublishedComponent & { created: boolean }> {
    const loaded = await this.options.loader.save(ownerId, input);
    const key = checkRegistryKey(loaded.validated.key, loaded.validated.name);
    const version = checkRegistryVersion(loaded.validated.version);
    const { entry, created } = await this.options.store.publish({
      ownerId,
      key,
      version,
      componentId: loaded.component.id,
      kind: loaded.validated.kind,
      publishedAt: this.now(),
    });
    if (created || entry.componentId === loaded.component.id) return { entry, component: loaded, created };
    // The same code may have been saved twice (bundled under another file name, say): it is still the same version.
    const published = await this.options.store.findComponent(ownerId, entry.componentId);
    if (published && published.codeHash === loaded.component.codeHash) {
      return { entry, component: { component: published, validated: this.options.loader.validatedOf(published) }, created: false };
    }
    throw new ConflictError(`${key}@${version} is published already with other code, and published versions never change. Bump the version (for example to ${semver.inc(version, "patch")}) and publish again.`, {
      key,
      version,
    });
  }

  /** The published component of `key` at `version`, or the newest version; NotFoundError when there is none. */
  async resolve(ownerId: string, key: string, version?: string): Promise<LoadedComponent> {
    return (await this.find(ownerId, key, version)).component;
  }

  /** As `resolve`, with the registry entry. */
  async find(ownerId: string, key: string, version?: string): Promise<PublishedComponent> {
    const entry = await this.options.store.findPublished(ownerId, key, version);
    const component = entry ? await this.options.store.findComponent(ownerId, entry.componentId) : null;
    if (!entry || !component) throw new NotFoundError("published component", version === undefined ? key : `${key}@${version}`);
    return { entry, component: { component, validated: this.options.loader.validatedOf(component) } };
  }

  /** Every version the owner published: keys alphabetically, newest version first. */
  list(ownerId: string): Promise<RegistryEntry[]> {
    return this.options.store.listPublished(ownerId);
  }
}
