import type { Kysely } from "kysely";
import { DATA_STORE_LIMITS, type DataStoreRecord, type DataStoreSummary } from "../../domain/data-stores.js";
import { PayloadTooLargeError } from "../../domain/errors.js";
import { newId } from "../../domain/ids.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import type { Database, DataStoreRecordRow } from "./schema.js";

type DataStoreQueries = Pick<
  Store,
  "listDataStores" | "dataStoreGet" | "dataStoreSet" | "dataStoreDelete" | "dataStoreRecords" | "dataStoreClear" | "deleteDataStore"
>;

/**
 * The user's named data stores. Every query is scoped by the owner; a
 * record counts only while it has not expired (`expires_at` in the past is
 * gone for every reader, and purged by the store's next write).
 */
export function dataStoreQueries({ db }: QueryContext): DataStoreQueries {
  const storeOf = (trx: Kysely<Database>, ownerId: string, name: string) =>
    trx.selectFrom("data_stores").selectAll().where("owner_id", "=", ownerId).where("name", "=", name).executeTakeFirst();

  return {
    async listDataStores(ownerId, now) {
      const stores = await db.selectFrom("data_stores").selectAll().where("owner_id", "=", ownerId).orderBy("name").execute();
      const counts = await db
        .selectFrom("data_store_records")
        .select((eb) => ["store_id", eb.fn.countAll<number>().as("keys"), eb.fn.sum<number>("bytes").as("bytes")])
        .where("owner_id", "=", ownerId)
        .where((eb) => live(eb, now))
        .groupBy("store_id")
        .execute();
      const byStore = new Map(counts.map((row) => [row.store_id, row]));
      return stores.map((row): DataStoreSummary => {
        const count = byStore.get(row.id);
        return { name: row.name, keyCount: Number(count?.keys ?? 0), bytes: Number(count?.bytes ?? 0), createdAt: Number(row.created_at), updatedAt: Number(row.updated_at) };
      });
    },

    async dataStoreGet(ownerId, name, key, now) {
      const row = await db
        .selectFrom("data_store_records")
        .innerJoin("data_stores", "data_stores.id", "data_store_records.store_id")
        .selectAll("data_store_records")
        .where("data_stores.owner_id", "=", ownerId)
        .where("data_stores.name", "=", name)
        .where("data_store_records.key", "=", key)
        .where((eb) => live(eb, now))
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async dataStoreSet(ownerId, name, record, now) {
      const bytes = Buffer.byteLength(record.key) + Buffer.byteLength(record.json);
      await db.transaction().execute(async (trx) => {
        let store = await storeOf(trx, ownerId, name);
        if (!store) {
          const count = await trx.selectFrom("data_stores").select((eb) => eb.fn.countAll<number>().as("count")).where("owner_id", "=", ownerId).executeTakeFirstOrThrow();
          if (Number(count.count) >= DATA_STORE_LIMITS.storesPerOwner) {
            throw new PayloadTooLargeError(`You have ${DATA_STORE_LIMITS.storesPerOwner} data stores, the most one user may have, so "${name}" cannot be created. Delete a store you no longer use (DELETE /v1/data_stores/<name>, or runnel stores delete <name>).`);
          }
          // Created meanwhile by a concurrent first write: that one is used. (A caught unique violation
          // would abort a PostgreSQL transaction, so the conflict is skipped in SQL.)
          await trx
            .insertInto("data_stores")
            .values({ id: newId("dataStore", now), owner_id: ownerId, name, created_at: now, updated_at: now })
            .onConflict((oc) => oc.columns(["owner_id", "name"]).doNothing())
            .execute();
          store = await storeOf(trx, ownerId, name);
          if (!store) throw new Error(`The data store "${name}" could not be created.`);
        }
        // Writes to one store take its row first: on PostgreSQL this serializes them, so the limits below hold.
        await trx.updateTable("data_stores").set({ updated_at: now }).where("id", "=", store.id).execute();
        await trx.deleteFrom("data_store_records").where("store_id", "=", store.id).where("expires_at", "<=", now).execute();
        const existing = await trx.selectFrom("data_store_records").select("bytes").where("store_id", "=", store.id).where("key", "=", record.key).executeTakeFirst();
        if (!existing) {
          const keys = await trx.selectFrom("data_store_records").select((eb) => eb.fn.countAll<number>().as("count")).where("store_id", "=", store.id).executeTakeFirstOrThrow();
          if (Number(keys.count) >= DATA_STORE_LIMITS.keysPerStore) {
            throw new PayloadTooLargeError(`The data store "${name}" holds ${DATA_STORE_LIMITS.keysPerStore} keys, the most a store may hold; "${record.key.slice(0, 100)}" was not added. Delete keys you no longer need, or give records a ttl.`);
          }
        }
        const total = await trx
          .selectFrom("data_store_records")
          .select((eb) => eb.fn.sum<number>("bytes").as("bytes"))
          .where("owner_id", "=", ownerId)
          .where((eb) => live(eb, now))
          .executeTakeFirstOrThrow();
        const after = Number(total.bytes ?? 0) - Number(existing?.bytes ?? 0) + bytes;
        if (after > DATA_STORE_LIMITS.ownerBytes) {
          throw new PayloadTooLargeError(
            `Your data stores would hold ${after} bytes, over the ${DATA_STORE_LIMITS.ownerBytes / 1024 / 1024} MB one user's stores may hold together; "${record.key.slice(0, 100)}" was not written. Delete records or stores you no longer need, or give records a ttl.`,
          );
        }
        const row = { key: record.key, value: record.json, bytes, expires_at: record.expiresAt, updated_at: now };
        await trx
          .insertInto("data_store_records")
          .values({ store_id: store.id, owner_id: ownerId, ...row })
          .onConflict((oc) => oc.columns(["store_id", "key"]).doUpdateSet({ value: row.value, bytes: row.bytes, expires_at: row.expires_at, updated_at: row.updated_at }))
          .execute();
      });
    },

    async dataStoreDelete(ownerId, name, key, now) {
      const store = await storeOf(db, ownerId, name);
      if (!store) return false;
      const deleted = await db.deleteFrom("data_store_records").where("store_id", "=", store.id).where("owner_id", "=", ownerId).where("key", "=", key).returning("expires_at").execute();
      return deleted.some((row) => row.expires_at === null || Number(row.expires_at) > now);
    },

    async dataStoreRecords(ownerId, name, query, now) {
      const store = await storeOf(db, ownerId, name);
      if (!store) return null;
      let select = db.selectFrom("data_store_records").selectAll().where("store_id", "=", store.id).where("owner_id", "=", ownerId).where((eb) => live(eb, now));
      if (query.after !== undefined) select = select.where("key", ">", query.after);
      const rows = await select.orderBy("key").limit(query.limit).execute();
      const total = await db
        .selectFrom("data_store_records")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("store_id", "=", store.id)
        .where((eb) => live(eb, now))
        .executeTakeFirstOrThrow();
      return { items: rows.map(toRecord), totalCount: Number(total.count) };
    },

    async dataStoreClear(ownerId, name) {
      const store = await storeOf(db, ownerId, name);
      if (!store) return 0;
      const deleted = await db.deleteFrom("data_store_records").where("store_id", "=", store.id).where("owner_id", "=", ownerId).executeTakeFirst();
      return Number(deleted.numDeletedRows);
    },

    deleteDataStore(ownerId, name) {
      return db.transaction().execute(async (trx) => {
        const store = await storeOf(trx, ownerId, name);
        if (!store) return false;
        await trx.deleteFrom("data_store_records").where("store_id", "=", store.id).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("data_stores").where("id", "=", store.id).where("owner_id", "=", ownerId).execute();
        return true;
      });
    },
  };
}

/** A record not expired at `now`. */
function live(eb: any, now: number) {
  return eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]);
}

function toRecord(row: DataStoreRecordRow): DataStoreRecord {
  return { key: row.key, value: JSON.parse(row.value), expiresAt: row.expires_at === null ? null : Number(row.expires_at), updatedAt: Number(row.updated_at) };
}
