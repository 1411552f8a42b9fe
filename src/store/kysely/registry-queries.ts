import type { Selectable } from "kysely";
import { newestEntry, sortEntries, type RegistryEntry } from "../../domain/registry.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import type { RegistryRow } from "./schema.js";

type RegistryQueries = Pick<Store, "publish" | "findPublished" | "listPublished">;

/** The user's component registry. Versions order by semver in code: text order would put 1.10.0 before 1.9.0. */
export function registryQueries({ db, isUniqueViolation }: QueryContext): RegistryQueries {
  const findExact = (ownerId: string, key: string, version: string) =>
    db
      .selectFrom("registry")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .where("key", "=", key)
      .where("version", "=", version)
      .executeTakeFirst();

  return {
    async publish(entry) {
      const existing = await findExact(entry.ownerId, entry.key, entry.version);
      if (existing) return { entry: toEntry(existing), created: false };
      try {
        await db
          .insertInto("registry")
          .values({
            owner_id: entry.ownerId,
            key: entry.key,
            version: entry.version,
            component_id: entry.componentId,
            kind: entry.kind,
            published_at: entry.publishedAt,
          })
          .execute();
        return { entry, created: true };
      } catch (error) {
        // Published by a concurrent request between the look and the insert: that one stands.
        const raced = isUniqueViolation(error) ? await findExact(entry.ownerId, entry.key, entry.version) : undefined;
        if (raced) return { entry: toEntry(raced), created: false };
        throw error;
      }
    },

    async findPublished(ownerId, key, version) {
      if (version !== undefined) {
        const row = await findExact(ownerId, key, version);
        return row ? toEntry(row) : null;
      }
      const rows = await db.selectFrom("registry").selectAll().where("owner_id", "=", ownerId).where("key", "=", key).execute();
      return newestEntry(rows.map(toEntry));
    },

    async listPublished(ownerId) {
      const rows = await db.selectFrom("registry").selectAll().where("owner_id", "=", ownerId).execute();
      return sortEntries(rows.map(toEntry));
    },
  };
}

function toEntry(row: Selectable<RegistryRow>): RegistryEntry {
  return {
    ownerId: row.owner_id,
    key: row.key,
    version: row.version,
    componentId: row.component_id,
    kind: row.kind === "action" ? "action" : "source",
    publishedAt: Number(row.published_at),
  };
}
