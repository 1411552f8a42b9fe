import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { MAX_PAGE_LIMIT, toPage } from "../../domain/paging.js";
import type { DataStoresService } from "../../engine/data-stores/data-stores-service.js";
import { principalOf } from "../request-context.js";
import { DataSchema, ErrorBodySchema, errorResponses, PageSchema } from "../schemas/common.js";
import {
  DataStoreParams,
  DataStoreRecordBodySchema,
  DataStoreRecordParams,
  DataStoreRecordSchema,
  DataStoreRecordsQuerySchema,
  DataStoreSchema,
  toDataStoreRecordView,
  toDataStoreView,
} from "../schemas/data-stores.js";

const responses = { ...errorResponses, 413: ErrorBodySchema };

/**
 * Your data stores: the key-value stores `data_store` props name, shared by
 * every source and step of yours that names one. Another user's store is
 * never visible: it answers 404 like one that does not exist.
 */
export const dataStoresRoutes: FastifyPluginAsyncTypebox<{ dataStores: DataStoresService }> = async (app, { dataStores }) => {
  app.get(
    "/data_stores",
    { schema: { tags: ["data stores"], summary: "Your data stores by name, with how many records each holds", response: { 200: PageSchema(DataStoreSchema), ...responses } } },
    async (request) => {
      const stores = (await dataStores.list(principalOf(request).user.id)).map(toDataStoreView);
      return toPage({ items: stores, totalCount: stores.length }, (store) => store.name);
    },
  );

  app.get(
    "/data_stores/:name/records",
    {
      schema: {
        tags: ["data stores"],
        summary: "A page of the store's records, by key (expired ones are gone)",
        params: DataStoreParams,
        querystring: DataStoreRecordsQuerySchema,
        response: { 200: PageSchema(DataStoreRecordSchema), ...responses },
      },
    },
    async (request) => {
      const limit = Math.min(request.query.limit ?? 10, MAX_PAGE_LIMIT);
      const slice = await dataStores.records(principalOf(request).user.id, request.params.name, { limit, after: request.query.after || undefined });
      return toPage({ items: slice.items.map(toDataStoreRecordView), totalCount: slice.totalCount }, (record) => record.key);
    },
  );

  app.get(
    "/data_stores/:name/records/:key",
    { schema: { tags: ["data stores"], summary: "One record", params: DataStoreRecordParams, response: { 200: DataSchema(DataStoreRecordSchema), ...responses } } },
    async (request) => ({ data: toDataStoreRecordView(await dataStores.get(principalOf(request).user.id, request.params.name, request.params.key)) }),
  );

  app.put(
    "/data_stores/:name/records/:key",
    {
      schema: {
        tags: ["data stores"],
        summary: "Write a record (the store is created by its first record); ttl in seconds",
        params: DataStoreRecordParams,
        body: DataStoreRecordBodySchema,
        response: { 200: DataSchema(DataStoreRecordSchema), ...responses },
      },
    },
    async (request) => {
      const { name, key } = request.params;
      const record = await dataStores.put(principalOf(request).user.id, name, key, request.body.value ?? null, request.body.ttl ?? null);
      return { data: toDataStoreRecordView(record) };
    },
  );

  app.delete(
    "/data_stores/:name/records/:key",
    { schema: { tags: ["data stores"], summary: "Delete a record", params: DataStoreRecordParams, response: { 204: Type.Null(), ...responses } } },
    async (request, reply) => {
      await dataStores.remove(principalOf(request).user.id, request.params.name, request.params.key);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    "/data_stores/:name",
    { schema: { tags: ["data stores"], summary: "Delete a store with all its records", params: DataStoreParams, response: { 204: Type.Null(), ...responses } } },
    async (request, reply) => {
      await dataStores.drop(principalOf(request).user.id, request.params.name);
      return reply.code(204).send(null);
    },
  );
};
