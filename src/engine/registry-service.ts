import type { Logger } from "pino";
import semver from "semver";
import type { BuiltCatalog } from "../catalog/build-catalog.js";
import { validateComponent, type ValidatedComponent } from "../domain/component-rules.js";
import { validateAppFile, type ValidatedAppFile } from "../domain/app-files.js";
import { ConflictError, NotFoundError, ValidationError } from "../domain/errors.js";
import type { PublishedAppEntry } from "../domain/published-apps.js";
import { slugify } from "../domain/slug.js";
import { newId } from "../domain/ids.js";
import {
  checkRegistryKey,
  checkRegistryVersion,
  matchesRegistryFilter,
  type CatalogComponent,
  type CatalogEntry,
  type RegistryEntry,
  type RegistryFilter,
  type RegistryListingFields,
  type RegistryNamespace,
} from "../domain/registry.js";
import type { SavedComponent } from "../domain/sources.js";
import type { Store } from "../store/store.js";
import type { ComponentInput, ComponentLoader, LoadedAppCode, LoadedComponent } from "./component-loader.js";

export interface RegistryServiceOptions {
  store: Store;
  loader: ComponentLoader;
  logger?: Logger;
  now?: () => number;
}

/** A published version with the component it is (for a catalog key: the caller's copy of it). */
export interface PublishedComponent {
  entry: RegistryEntry;
  namespace: RegistryNamespace;
  component: LoadedComponent;
}

/** A published version of an app file (kind "app"): its key is its slug. */
export interface PublishedAppVersion {
  entry: PublishedAppEntry;
  namespace: "user";
  app: ValidatedAppFile;
}

/** One key as a listing shows it: its newest version, described (a component, or an app file). */
export interface RegistryListing extends RegistryListingFields {
  version: string;
  publishedAt: number;
  /** Every version, newest first. */
  versions: Array<{ version: string; publishedAt: number }>;
  validated: ValidatedComponent | null;
  /** For kind "app". */
  app?: ValidatedAppFile;
}

/** The owner id of catalog entries as RegistryEntry shows them: no user has it. */
export const CATALOG_OWNER = "catalog";

/**
 * The component registry: the user's own published actions and sources, by
 * `key` and semantic `version`, and beside them Runnel's catalog, which
 * every user sees. A user's keys are never seen by another user; catalog keys
 * cannot be published over. A catalog component resolved by key is copied
 * among the caller's components (runners are per user), once per code.
 */
export class RegistryService {
  private readonly now: () => number;
  /** Catalog versions never change: each is validated once. */
  private readonly catalogValidated = new Map<string, ValidatedComponent>();
  private readonly appsValidated = new Map<string, ValidatedAppFile>();

  constructor(private readonly options: RegistryServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Saves the code as a component (bundled, loaded in a sandbox runner and
   * validated, as POST /v1/components does), checks the registry rules
   * (ValidationError naming `key` or `version`; ConflictError for a key of
   * the catalog), then publishes it. Publishing a version again with the
   * same code returns the existing entry (`created: false`); with other
   * code it is a ConflictError: versions are immutable, bump it.
   */
  async publish(ownerId: string, input: ComponentInput): Promise<(PublishedComponent | PublishedAppVersion) & { created: boolean }> {
    const loaded = await this.options.loader.load(ownerId, input);
    if ("app" in loaded) return this.publishApp(ownerId, loaded.app);
    const key = checkRegistryKey(loaded.validated.key, loaded.validated.name);
    const version = checkRegistryVersion(loaded.validated.version);
    if (await this.options.store.findPublishedApp(ownerId, key)) {
      throw new ConflictError(`${key} is the key of an app you published; a component's key is "<app>-<component-name>", such as "${key}-${slugify(loaded.validated.name)}". Change the key and publish again.`, { key });
    }
    if (await this.options.store.findCatalogComponent(key)) {
      const slug = key.slice(key.indexOf("-") + 1);
      throw new ConflictError(
        `The key ${key} belongs to Runnel's catalog, which every user shares, so it cannot be published over. Give your component a key of its own (for example "my-${slug}") and publish again; deploy the catalog's one by its key.`,
        { key },
      );
    }
    const { entry, created } = await this.options.store.publish({
      ownerId,
      key,
      version,
      componentId: loaded.component.id,
      kind: loaded.validated.kind,
      publishedAt: this.now(),
    });
    if (created || entry.componentId === loaded.component.id) return { entry, namespace: "user", component: loaded, created };
    // The same code may have been saved twice (bundled under another file name, say): it is still the same version.
    const published = await this.options.store.findComponent(ownerId, entry.componentId);
    if (published && published.codeHash === loaded.component.codeHash) {
      return { entry, namespace: "user", component: { component: published, validated: this.options.loader.validatedOf(published) }, created: false };
    }
    throw new ConflictError(`${key}@${version} is published already with other code, and published versions never change. Bump the version (for example to ${semver.inc(version, "patch")}) and publish again.`, {
      key,
      version,
    });
  }

  /**
   * An app file (`type: "app"`) published on its own: its slug is its key,
   * its version semantic and immutable, as a component's. A key held by a
   * component (yours, or the catalog's) is a ConflictError.
   */
  private async publishApp(ownerId: string, code: LoadedAppCode): Promise<PublishedAppVersion & { created: boolean }> {
    const { store } = this.options;
    const app = validateAppFile(code.manifest);
    const version = checkRegistryVersion(app.version);
    const key = app.slug;
    if ((await store.findPublished(ownerId, key)) || (await store.findCatalogComponent(key))) {
      throw new ConflictError(`${key} is the key of a published component, so an app cannot be published under it. Give the app another slug, or the component another key.`, { key });
    }
    const { app: entry, created } = await store.publishApp({
      ownerId,
      slug: key,
      version,
      name: app.name,
      description: app.description,
      codeHash: code.codeHash,
      manifest: code.manifest,
      publishedAt: this.now(),
      code: code.code,
      bundle: code.bundle,
      bundleHash: code.bundleHash,
      bundleMap: code.bundleMap,
    });
    if (!created && entry.codeHash !== code.codeHash) {
      throw new ConflictError(`The app ${key}@${version} is published already with other code, and published versions never change. Bump the version (for example to ${semver.inc(version, "patch")}) and publish again.`, {
        key,
        version,
      });
    }
    return { entry, namespace: "user", app: this.validatedApp(entry), created };
  }

  /** A published key, a component or an app: GET /v1/components/registry/<key>. */
  async findAny(ownerId: string, key: string, version?: string): Promise<PublishedComponent | PublishedAppVersion> {
    const app = await this.options.store.findPublishedApp(ownerId, key, version);
    if (app) return { entry: app, namespace: "user", app: this.validatedApp(app) };
    return this.find(ownerId, key, version);
  }

  /** The published component of `key` at `version`, or the newest version; NotFoundError when there is none. */
  async resolve(ownerId: string, key: string, version?: string): Promise<LoadedComponent> {
    await this.refuseApp(ownerId, key, version);
    return (await this.find(ownerId, key, version)).component;
  }

  /**
   * As `resolve`, with the registry entry. The user's own key comes first (a
   * key they published before the catalog had it stays theirs); otherwise the
   * catalog's, copied among the user's components.
   */
  async find(ownerId: string, key: string, version?: string): Promise<PublishedComponent> {
    const { store, loader } = this.options;
    const own = await store.findPublished(ownerId, key, version);
    if (own) {
      const component = await store.findComponent(ownerId, own.componentId);
      if (component) return { entry: own, namespace: "user", component: { component, validated: loader.validatedOf(component) } };
    }
    const ownsKey = own !== null || (version !== undefined && (await store.findPublished(ownerId, key)) !== null);
    const catalog = ownsKey ? null : await store.findCatalogComponent(key, version);
    if (!catalog) throw new NotFoundError("published component", version === undefined ? key : `${key}@${version}`);
    const component = await this.adopt(ownerId, catalog);
    return {
      entry: { ownerId: CATALOG_OWNER, key, version: catalog.version, componentId: component.component.id, kind: catalog.kind, publishedAt: catalog.publishedAt },
      namespace: "catalog",
      component,
    };
  }

  /** As `resolve`, for deploys: the saved component, or null when the registry has no such key (or version). */
  async findSaved(ownerId: string, key: string, version?: string): Promise<SavedComponent | null> {
    await this.refuseApp(ownerId, key, version);
    try {
      return (await this.find(ownerId, key, version)).component.component;
    } catch (error) {
      if (error instanceof NotFoundError) return null;
      throw error;
    }
  }

  /** A ValidationError naming `key` when the key is one of the owner's apps: an app is used through an app prop, never deployed or run. */
  private async refuseApp(ownerId: string, key: string, version?: string): Promise<void> {
    if (await this.options.store.findPublishedApp(ownerId, key, version)) {
      throw new ValidationError(
        "key",
        `${key} is an app, not a component: an app is not deployed, nor run as a workflow step. Components use it through an app prop (props: { ${propName(key)}: { type: "app", app: "${key}" } }); use such a component instead.`,
      );
    }
  }

  /** Every version the owner published: keys alphabetically, newest version first. */
  list(ownerId: string): Promise<RegistryEntry[]> {
    return this.options.store.listPublished(ownerId);
  }

  /** The owner's versions and the catalog's keys the owner has not published, for the word search. */
  async searchable(ownerId: string): Promise<RegistryEntry[]> {
    const own = await this.options.store.listPublished(ownerId);
    const owned = new Set(own.map((entry) => entry.key));
    const catalog = (await this.options.store.listCatalog()).filter((entry) => !owned.has(entry.key));
    return [...own, ...catalog.map((entry) => catalogEntryAsRegistryEntry(entry))];
  }

  /**
   * One item per key, its newest version described, keys alphabetically:
   * the caller's own keys and the catalog's (a key the caller published
   * hides the catalog's), filtered.
   */
  async listings(ownerId: string, filter: RegistryFilter = {}): Promise<RegistryListing[]> {
    const { store, loader } = this.options;
    const listings: RegistryListing[] = [];
    const own = await store.listPublished(ownerId);
    const ownKeys = new Map<string, RegistryEntry[]>();
    for (const entry of own) ownKeys.set(entry.key, [...(ownKeys.get(entry.key) ?? []), entry]);
    if (filter.namespace !== "catalog") {
      for (const [key, versions] of ownKeys) {
        const newest = versions.find((entry) => semver.prerelease(entry.version) === null) ?? versions[0]!;
        const component = await store.findComponent(ownerId, newest.componentId);
        if (!component) continue;
        const validated = loader.validatedOf(component);
        listings.push({
          key,
          name: validated.name,
          description: validated.description,
          kind: newest.kind,
          namespace: "user",
          version: newest.version,
          publishedAt: newest.publishedAt,
          versions: versions.map((entry) => ({ version: entry.version, publishedAt: entry.publishedAt })),
          validated,
        });
      }
    }
    if (filter.namespace !== "catalog") listings.push(...(await this.appListings(ownerId)));
    if (filter.namespace !== "user") {
      const catalogKeys = new Map<string, CatalogEntry[]>();
      for (const entry of await store.listCatalog()) if (!ownKeys.has(entry.key)) catalogKeys.set(entry.key, [...(catalogKeys.get(entry.key) ?? []), entry]);
      for (const [key, versions] of catalogKeys) {
        const newest = versions.find((entry) => semver.prerelease(entry.version) === null) ?? versions[0]!;
        const validated = this.validatedCatalog(newest);
        if (!validated) continue;
        listings.push({
          key,
          name: newest.name,
          description: newest.description,
          kind: newest.kind,
          namespace: "catalog",
          version: newest.version,
          publishedAt: newest.publishedAt,
          versions: versions.map((entry) => ({ version: entry.version, publishedAt: entry.publishedAt })),
          validated,
        });
      }
    }
    return listings.filter((listing) => matchesRegistryFilter(listing, filter)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The owner's published apps, one listing per slug (its newest release). */
  private async appListings(ownerId: string): Promise<RegistryListing[]> {
    const bySlug = new Map<string, PublishedAppEntry[]>();
    for (const entry of await this.options.store.listPublishedApps(ownerId)) bySlug.set(entry.slug, [...(bySlug.get(entry.slug) ?? []), entry]);
    return [...bySlug].map(([slug, versions]) => {
      const newest = versions.find((entry) => semver.prerelease(entry.version) === null) ?? versions[0]!;
      return {
        key: slug,
        name: newest.name,
        description: newest.description,
        kind: "app" as const,
        namespace: "user" as const,
        version: newest.version,
        publishedAt: newest.publishedAt,
        versions: versions.map((entry) => ({ version: entry.version, publishedAt: entry.publishedAt })),
        validated: null,
        app: this.validatedApp(newest),
      };
    });
  }

  /** A stored app version was validated when published; validation is pure, so it is cached. */
  private validatedApp(entry: PublishedAppEntry): ValidatedAppFile {
    const id = `${entry.ownerId} ${entry.slug}@${entry.version}`;
    let validated = this.appsValidated.get(id);
    if (!validated) {
      validated = validateAppFile(entry.manifest);
      if (this.appsValidated.size >= 10_000) this.appsValidated.clear();
      this.appsValidated.set(id, validated);
    }
    return validated;
  }

  /**
   * Start-up: adds the catalog's versions the store does not hold yet. A
   * version held already is left as it is (the same code: nothing to do;
   * other code: a warning, since versions never change). Components that
   * failed to build are logged with their key and skipped.
   */
  async publishCatalog(catalog: BuiltCatalog): Promise<{ added: string[]; failed: string[] }> {
    const logger = this.options.logger;
    const failed: string[] = [];
    for (const failure of catalog.failures) {
      failed.push(failure.key ?? failure.path);
      logger?.error({ key: failure.key, path: `catalog/${failure.path}` }, `The catalog component ${failure.key ?? `in catalog/${failure.path}`} was skipped: ${failure.message}`);
    }
    const held = new Map((await this.options.store.listCatalog()).map((entry) => [`${entry.key}@${entry.version}`, entry]));
    const added: string[] = [];
    for (const component of catalog.components) {
      const id = `${component.key}@${component.version}`;
      const existing = held.get(id);
      if (existing) {
        if (existing.codeHash !== component.codeHash) {
          logger?.warn({ key: component.key, version: component.version, path: `catalog/${component.path}` }, `The catalog's ${id} changed but kept its version; the published ${id} is kept. Bump the version in catalog/${component.path}.`);
        }
        continue;
      }
      try {
        validateComponent(component.manifest);
        const publishedAt = this.now();
        if (await this.options.store.addCatalogVersion({ ...component, publishedAt })) added.push(id);
      } catch (error) {
        failed.push(component.key);
        logger?.error({ key: component.key, path: `catalog/${component.path}`, err: error }, `The catalog component ${component.key} was skipped: ${(error as Error).message}`);
      }
    }
    logger?.info({ added: added.length, components: catalog.components.length, skipped: failed.length }, added.length > 0 ? `published ${added.length} new catalog version(s)` : "the catalog is published");
    return { added, failed };
  }

  /** The catalog component as one of the owner's saved components (the same code is saved once). */
  private async adopt(ownerId: string, catalog: CatalogComponent): Promise<LoadedComponent> {
    const at = this.now();
    const saved = await this.options.store.saveComponent({
      id: newId("savedComponent", at),
      ownerId,
      name: catalog.name,
      version: catalog.version,
      key: catalog.key,
      kind: catalog.kind,
      code: catalog.code,
      codeHash: catalog.codeHash,
      bundle: catalog.bundle,
      bundleHash: catalog.bundleHash,
      bundleMap: catalog.bundleMap,
      lock: null,
      manifest: catalog.manifest,
      createdAt: at,
      updatedAt: at,
    });
    return { component: saved, validated: this.options.loader.validatedOf(saved) };
  }

  private validatedCatalog(entry: CatalogEntry): ValidatedComponent | null {
    const id = `${entry.key}@${entry.version}`;
    let validated = this.catalogValidated.get(id);
    if (!validated) {
      try {
        validated = validateComponent(entry.manifest, { asStep: entry.kind === "action" });
      } catch (error) {
        this.options.logger?.error({ key: entry.key, version: entry.version, err: error }, `The catalog's ${id} is not listed: its stored manifest is not valid.`);
        return null;
      }
      this.catalogValidated.set(id, validated);
    }
    return validated;
  }
}

function catalogEntryAsRegistryEntry(entry: CatalogEntry): RegistryEntry {
  return { ownerId: CATALOG_OWNER, key: entry.key, version: entry.version, componentId: "", kind: entry.kind, publishedAt: entry.publishedAt };
}

/** An app slug as a prop name, for an example: `google_sheets` → `google_sheets`, `my-app` → `my_app`. */
function propName(slug: string): string {
  return slug.replace(/-/g, "_");
}
