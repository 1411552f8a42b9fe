import { Type, type Static } from "@sinclair/typebox";
import type { DataStoreRecord, DataStoreSummary } from "../../domain/data-stores.js";
import { toEpochSeconds } from "./common.js";

export const DataStoreSchema = Type.Object(
  {
    name: Type.String({ description: "The name data_store props are configured with; unique among your stores." }),
    key_count: Type.Integer({ description: "Records not expired." }),
    bytes: Type.Integer({ description: "Bytes of those records' keys and JSON values." }),
    created_at: Type.Integer({ description: "Epoch seconds." }),
    updated_at: Type.Integer({ description: "Epoch seconds: the last write." }),
  },
  { title: "DataStore" },
);

export const DataStoreRecordSchema = Type.Object(
  {
    key: Type.String(),
    value: Type.Unknown({ description: "Any JSON value." }),
    expires_at: Type.Union([Type.Integer(), Type.Null()], { description: "Epoch seconds after which the record is gone; null: never." }),
    updated_at: Type.Integer({ description: "Epoch seconds." }),
  },
  { title: "DataStoreRecord" },
);

export const DataStoreRecordBodySchema = Type.Object(
  {
    value: Type.Unknown({ description: "Any JSON value, at most 60 KB as JSON." }),
    ttl: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()], { description: "Seconds until the record expires; absent or null: never." })),
  },
  { additionalProperties: false },
);

export const DataStoreParams = Type.Object({ name: Type.String({ description: "The store's name (URL-encoded)." }) });
export const DataStoreRecordParams = Type.Object({ name: Type.String({ description: "The store's name (URL-encoded)." }), key: Type.String({ description: "The record's key (URL-encoded)." }) });

export const DataStoreRecordsQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, default: 10, description: "Records per page, 1 to 100; more is taken as 100." })),
    after: Type.Optional(Type.String({ description: "An end_cursor (a key): the page of records after it, by key." })),
  },
  { additionalProperties: false },
);

export type DataStoreView = Static<typeof DataStoreSchema>;
export type DataStoreRecordView = Static<typeof DataStoreRecordSchema>;

export function toDataStoreView(store: DataStoreSummary): Static<typeof DataStoreSchema> {
  return { name: store.name, key_count: store.keyCount, bytes: store.bytes, created_at: toEpochSeconds(store.createdAt), updated_at: toEpochSeconds(store.updatedAt) };
}

export function toDataStoreRecordView(record: DataStoreRecord): Static<typeof DataStoreRecordSchema> {
  return { key: record.key, value: record.value, expires_at: record.expiresAt === null ? null : toEpochSeconds(record.expiresAt), updated_at: toEpochSeconds(record.updatedAt) };
}
