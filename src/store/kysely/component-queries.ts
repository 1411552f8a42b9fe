import type { Selectable } from "kysely";
import type { ComponentManifest } from "../../domain/component-manifest.js";
import type { PackageLock } from "../../domain/package-lock.js";
import type { SavedComponent } from "../../domain/sources.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { fromJson, toJson } from "./json-columns.js";
import type { ComponentRow } from "./schema.js";

type ComponentQueries = Pick<Store, "saveComponent" | "findComponentByCode" | "findComponent">;

/** Saved components. */
export function componentQueries({ db }: QueryContext): ComponentQueries {
  return {
    async saveComponent(component) {
      const existing = await db
        .selectFrom("components")
        .selectAll()
        .where("owner_id", "=", component.ownerId)
        .where("code_hash", "=", component.codeHash)
        .where("bundle_hash", "=", component.bundleHash)
        // The same code saved as a source and as a step are two components (validated differently).
        .where("kind", "=", component.kind)
        .orderBy("id", "desc")
        .executeTakeFirst();
      if (existing) {
        // Saved before source maps were kept: the same bundle gets its map now, so its stack traces name the user's lines.
        if (existing.bundle_map === null && component.bundleMap !== null) {
          await db.updateTable("components").set({ bundle_map: component.bundleMap }).where("id", "=", existing.id).execute();
          existing.bundle_map = component.bundleMap;
        }
        return toComponent(existing);
      }
      await db
        .insertInto("components")
        .values({
          id: component.id,
          owner_id: component.ownerId,
          name: component.name,
          version: component.version,
          key: component.key,
          kind: component.kind,
          code: component.code,
          code_hash: component.codeHash,
          bundle: component.bundle,
          bundle_hash: component.bundleHash,
          bundle_map: component.bundleMap,
          lock: component.lock ? toJson(component.lock) : null,
          manifest: toJson(component.manifest),
          created_at: component.createdAt,
          updated_at: component.updatedAt,
        })
        .execute();
      return component;
    },

    async findComponentByCode(ownerId, codeHash) {
      const row = await db
        .selectFrom("components")
        .selectAll()
        .where("owner_id", "=", ownerId)
        .where("code_hash", "=", codeHash)
        .orderBy("id", "desc")
        .executeTakeFirst();
      return row ? toComponent(row) : null;
    },

    async findComponent(ownerId, idOrKey) {
      const row = await db
        .selectFrom("components")
        .selectAll()
        .where("owner_id", "=", ownerId)
        .where((eb) => eb.or([eb("id", "=", idOrKey), eb("key", "=", idOrKey)]))
        .orderBy("id", "desc")
        .executeTakeFirst();
      return row ? toComponent(row) : null;
    },
  };
}

function toComponent(row: Selectable<ComponentRow>): SavedComponent {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    version: row.version,
    key: row.key,
    kind: row.kind === "action" ? "action" : "source",
    code: row.code,
    codeHash: row.code_hash,
    bundle: row.bundle,
    bundleHash: row.bundle_hash,
    bundleMap: row.bundle_map,
    lock: row.lock === null ? null : fromJson<PackageLock>(row.lock),
    manifest: fromJson<ComponentManifest>(row.manifest),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
