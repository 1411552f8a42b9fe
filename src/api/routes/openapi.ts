import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";

export const OPENAPI_PATH = "/v1/openapi.json";

/** The OpenAPI 3.1 document, generated from the route schemas; no key needed. */
export const openApiRoutes: FastifyPluginAsyncTypebox<{ document: () => unknown }> = async (app, { document }) => {
  app.get("/openapi.json", { schema: { hide: true } }, async () => document());
};
