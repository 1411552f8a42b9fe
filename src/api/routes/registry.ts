import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import { pageByKey, searchRegistry } from "../../domain/registry.js";
import type { RegistryService } from "../../engine/registry-service.js";
import { principalOf } from "../request-context.js";
import { DataSchema, ErrorBodySchema, errorResponses, PageSchema } from "../schemas/common.js";
import {
  PublishedComponentSchema,
  RegistryKeyParamsSchema,
  RegistryListingSchema,
  RegistryListQuerySchema,
  RegistryVersionQuerySchema,
  toPublishedComponentView,
  toRegistryListingView,
} from "../schemas/registry.js";
import { ComponentInputFields } from "../schemas/sources.js";

/**
 * The caller's component registry. The static `registry` segment is matched
 * before `GET /components/:idOrKey`, so a saved component keyed "registry"
 * is reached by its id, not its key.
 */
export const registryRoutes: FastifyPluginAsyncTypebox<{ registry: RegistryService }> = async (app, { registry }) => {
  app.post(
    "/components/registry",
    {
      schema: {
        tags: ["components"],
        summary: "Publish a component (its key and semantic version), or an app file (type: \"app\"; key = its app slug), to your registry: 201 when new, 200 when that version holds the same code already; 409 for other code, or a key held already by another kind or by Runnel's catalog",
        body: Type.Object(ComponentInputFields, { additionalProperties: false }),
        response: { 200: DataSchema(PublishedComponentSchema), 201: DataSchema(PublishedComponentSchema), ...errorResponses, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const published = await registry.publish(principalOf(request).user.id, request.body);
      return reply.code(published.created ? 201 : 200).send({ data: toPublishedComponentView(published) });
    },
  );

  app.get(
    "/components/registry",
    {
      schema: {
        tags: ["components"],
        summary: "Runnel's catalog and the components and app files you published, one item per key (its newest version), keys alphabetically, paged; q, app, type (source, action, app) and namespace filter",
        querystring: RegistryListQuerySchema,
        response: { 200: PageSchema(RegistryListingSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { q, app: appSlug, type, namespace, ...paging } = request.query;
      const page = parsePageRequest(paging);
      const listings = await registry.listings(principalOf(request).user.id, { q, app: appSlug, type, namespace });
      return toPage({ items: pageByKey(listings, page).map(toRegistryListingView), totalCount: listings.length }, (item) => item.key);
    },
  );

  app.get(
    "/components/search",
    {
      schema: {
        tags: ["components"],
        summary: "Search your registry by words (the hosted API's registry search): keys of sources and actions, best first",
        querystring: Type.Object(
          {
            query: Type.String({ description: "Words to look for, like \"new row in google sheets\"" }),
            app: Type.Optional(Type.String({ description: "Only components of this app (keys that start with <app>-)" })),
            similarity_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: "The share of the query's words a key must hold, 0 to 1" })),
            debug: Type.Optional(Type.Boolean({ description: "Accepted for compatibility; adds nothing" })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ sources: Type.Array(Type.String()), actions: Type.Array(Type.String()) }), ...errorResponses },
      },
    },
    async (request) => {
      const { query, app: appSlug, similarity_threshold: threshold } = request.query;
      return searchRegistry(await registry.searchable(principalOf(request).user.id), { query, app: appSlug, threshold });
    },
  );

  app.get(
    "/components/registry/:key",
    {
      schema: {
        tags: ["components"],
        summary: "A published component by key (yours, else Runnel's catalog's, copied among your components), or a published app file by its slug: the given version, or the highest release",
        params: RegistryKeyParamsSchema,
        querystring: RegistryVersionQuerySchema,
        response: { 200: DataSchema(PublishedComponentSchema), ...errorResponses },
      },
    },
    async (request) => {
      const published = await registry.findAny(principalOf(request).user.id, request.params.key, request.query.version);
      return { data: toPublishedComponentView(published) };
    },
  );
};
