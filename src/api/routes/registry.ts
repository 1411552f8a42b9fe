import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { RegistryService } from "../../engine/registry-service.js";
import { principalOf } from "../request-context.js";
import { DataSchema, ErrorBodySchema, errorResponses } from "../schemas/common.js";
import {
  PublishedComponentSchema,
  RegistryEntrySchema,
  RegistryKeyParamsSchema,
  RegistryVersionQuerySchema,
  toPublishedComponentView,
  toRegistryEntryView,
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
        summary: "Publish a component (its key and semantic version) to your registry: 201 when new, 200 when that version holds the same code already",
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
        summary: "Every version you published: keys alphabetically, each key's versions newest first",
        response: { 200: DataSchema(Type.Array(RegistryEntrySchema)), ...errorResponses },
      },
    },
    async (request) => {
      const entries = await registry.list(principalOf(request).user.id);
      return { data: entries.map(toRegistryEntryView) };
    },
  );

  app.get(
    "/components/registry/:key",
    {
      schema: {
        tags: ["components"],
        summary: "A published component by key: the given version, or the highest release",
        params: RegistryKeyParamsSchema,
        querystring: RegistryVersionQuerySchema,
        response: { 200: DataSchema(PublishedComponentSchema), ...errorResponses },
      },
    },
    async (request) => {
      const published = await registry.find(principalOf(request).user.id, request.params.key, request.query.version);
      return { data: toPublishedComponentView(published) };
    },
  );
};
