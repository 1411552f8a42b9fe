import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import type { Accounts } from "../../engine/accounts.js";
import { principalOf } from "../request-context.js";
import { ApiKeySchema, CreateApiKeyBodySchema, IssuedApiKeySchema, toApiKeyView } from "../schemas/accounts.js";
import { DataSchema, errorResponses, PageQuerySchema, PageSchema } from "../schemas/common.js";

/** The caller's own API keys: create (the secret is shown once), list, revoke. */
export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ accounts: Accounts }> = async (app, { accounts }) => {
  app.get(
    "/users/me/api_keys",
    {
      schema: {
        tags: ["api keys"],
        summary: "List your API keys, newest first (secrets are never shown again)",
        querystring: PageQuerySchema,
        response: { 200: PageSchema(ApiKeySchema), ...errorResponses },
      },
    },
    async (request) => {
      const slice = await accounts.listApiKeys(principalOf(request), parsePageRequest(request.query));
      return toPage({ items: slice.items.map(toApiKeyView), totalCount: slice.totalCount }, (key) => key.id);
    },
  );

  app.post(
    "/users/me/api_keys",
    {
      schema: {
        tags: ["api keys"],
        summary: "Create an API key; the answer holds its secret, once",
        body: Type.Optional(CreateApiKeyBodySchema),
        response: { 201: DataSchema(IssuedApiKeySchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const issued = await accounts.createApiKey(principalOf(request), request.body?.name);
      reply.code(201);
      return { data: { ...toApiKeyView(issued.key), key: issued.secret } };
    },
  );

  app.delete(
    "/users/me/api_keys/:id",
    {
      schema: {
        tags: ["api keys"],
        summary: "Revoke one of your API keys; requests with it fail from now on",
        params: Type.Object({ id: Type.String() }),
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await accounts.revokeApiKey(principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
};
