import type { Selectable } from "kysely";
import type { ComponentManifest } from "../../domain/component-manifest.js";
import { newestEntry, sortEntries, type CatalogComponent, type CatalogEntry } from "../../domain/registry.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { fromJson, toJson } from "./json-columns.js";
import type { CatalogComponentRow } from "./schema.js";

type CatalogQueries = Pick<Store, "addCatalogVersion" | "listCatalog" | "findCatalogComponent">;

/** Columns of a listing: everything but the code and the bundle, which only a deploy needs. */
const ENTRY_COLUMNS = ["key", "version", "kind", "name", "description", "path", "code_hash", "manifest", "published_at"] as const;

/** Runnel's catalog: ownerless versions, inserted once each, never changed. */
export function catalogQueries({ db }: QueryContext): CatalogQueries {
  return {
    async addCatalogVersion(component) {
      // Several processes starting at once each try: the primary key lets one in, the others change nothing.
      const result = await db
        .insertInto("catalog_components")
        .values({
          key: component.key,
          version: component.version,
          kind: component.kind,
          name: component.name,
          description: component.description,
          path: component.path,
          code: component.code,
          code_hash: component.codeHash,
          bundle: component.bundle,
          bundle_hash: component.bundleHash,
          bundle_map: component.bundleMap,
          manifest: toJson(component.manifest),
          published_at: component.publishedAt,
        })
        .onConflict((conflict) => conflict.columns(["key", "version"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async listCatalog() {
      const rows = await db.selectFrom("catalog_components").select(ENTRY_COLUMNS).execute();
      return sortEntries(rows.map(toEntry));
    },

    async findCatalogComponent(key, version) {
      let chosen = version;
      if (chosen === undefined) {
        const versions = await db.selectFrom("catalog_components").select("version").where("key", "=", key).execute();
        chosen = newestEntry(versions)?.version;
        if (chosen === undefined) return null;
      }
      const row = await db.selectFrom("catalog_components").selectAll().where("key", "=", key).where("version", "=", chosen).executeTakeFirst();
      return row ? toComponent(row) : null;
    },
  };
}

function toEntry(row: Pick<Selectable<CatalogComponentRow>, (typeof ENTRY_COLUMNS)[number]>): CatalogEntry {
  return {
    key: row.key,
    version: row.version,
    kind: row.kind === "action" ? "action" : "source",
    name: row.name,
    description: row.description,
    path: row.path,
    codeHash: row.code_hash,
    manifest: fromJson<ComponentManifest>(row.manifest),
    publishedAt: Number(row.published_at),
  };
}

function toComponent(row: Selectable<CatalogComponentRow>): CatalogComponent {
  return { ...toEntry(row), code: row.code, bundle: row.bundle, bundleHash: row.bundle_hash, bundleMap: row.bundle_map };
}
