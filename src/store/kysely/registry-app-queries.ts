import type { Selectable } from "kysely";
import type { ComponentManifest } from "../../domain/component-manifest.js";
import type { PublishedApp, PublishedAppEntry } from "../../domain/published-apps.js";
import { newestEntry, sortEntries } from "../../domain/registry.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { fromJson, toJson } from "./json-columns.js";
import type { RegistryAppRow } from "./schema.js";

type RegistryAppQueries = Pick<Store, "publishApp" | "findPublishedApp" | "listPublishedApps">;

/** Columns of a listing: everything but the code and the bundle, which only a component that uses the app needs. */
const ENTRY_COLUMNS = ["owner_id", "slug", "version", "name", "description", "code_hash", "manifest", "published_at"] as const;

/** App files published on their own. Versions order by semver in code, as the component registry's do. */
export function registryAppQueries({ db, isUniqueViolation }: QueryContext): RegistryAppQueries {
  const findExact = (ownerId: string, slug: string, version: string) =>
    db.selectFrom("registry_apps").selectAll().where("owner_id", "=", ownerId).where("slug", "=", slug).where("version", "=", version).executeTakeFirst();

  return {
    async publishApp(app) {
      const existing = await findExact(app.ownerId, app.slug, app.version);
      if (existing) return { app: toEntry(existing), created: false };
      try {
        await db
          .insertInto("registry_apps")
          .values({
            owner_id: app.ownerId,
            slug: app.slug,
            version: app.version,
            name: app.name,
            description: app.description,
            code: app.code,
            code_hash: app.codeHash,
            bundle: app.bundle,
            bundle_hash: app.bundleHash,
            bundle_map: app.bundleMap,
            manifest: toJson(app.manifest),
            published_at: app.publishedAt,
          })
          .execute();
        const { code: _code, bundle: _bundle, bundleHash: _bundleHash, bundleMap: _bundleMap, ...entry } = app;
        return { app: entry, created: true };
      } catch (error) {
        // Published by a concurrent request between the look and the insert: that one stands.
        const raced = isUniqueViolation(error) ? await findExact(app.ownerId, app.slug, app.version) : undefined;
        if (raced) return { app: toEntry(raced), created: false };
        throw error;
      }
    },

    async findPublishedApp(ownerId, slug, version) {
      let chosen = version;
      if (chosen === undefined) {
        const versions = await db.selectFrom("registry_apps").select("version").where("owner_id", "=", ownerId).where("slug", "=", slug).execute();
        chosen = newestEntry(versions)?.version;
        if (chosen === undefined) return null;
      }
      const row = await findExact(ownerId, slug, chosen);
      return row ? toApp(row) : null;
    },

    async listPublishedApps(ownerId) {
      const rows = await db.selectFrom("registry_apps").select(ENTRY_COLUMNS).where("owner_id", "=", ownerId).execute();
      return sortEntries(rows.map((row) => ({ ...toEntry(row), key: row.slug }))).map(({ key: _key, ...entry }) => entry);
    },
  };
}

function toEntry(row: Pick<Selectable<RegistryAppRow>, (typeof ENTRY_COLUMNS)[number]>): PublishedAppEntry {
  return {
    ownerId: row.owner_id,
    slug: row.slug,
    version: row.version,
    name: row.name,
    description: row.description,
    codeHash: row.code_hash,
    manifest: fromJson<ComponentManifest>(row.manifest),
    publishedAt: Number(row.published_at),
  };
}

function toApp(row: Selectable<RegistryAppRow>): PublishedApp {
  return { ...toEntry(row), code: row.code, bundle: row.bundle, bundleHash: row.bundle_hash, bundleMap: row.bundle_map };
}
