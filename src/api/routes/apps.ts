import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppCatalog } from "../../engine/apps/app-catalog.js";
import { principalOf } from "../request-context.js";
import { AppBodySchema, AppParams, AppSchema, OAuthClientBodySchema, toAppView } from "../schemas/apps.js";
import { DataSchema, ErrorBodySchema, errorResponses, PageSchema } from "../schemas/common.js";

/** The apps components connect to: how each authenticates, and (admins) their OAuth clients. */
export const appsRoutes: FastifyPluginAsyncTypebox<{ apps: AppCatalog }> = async (app, { apps }) => {
  app.get(
    "/apps",
    { schema: { tags: ["apps"], summary: "Every app this server knows: shipped ones and those an admin added, with how accounts of each connect", response: { 200: PageSchema(AppSchema), ...errorResponses } } },
    async () => {
      const all = (await apps.list()).map(toAppView);
      return { page_info: { total_count: all.length, count: all.length, start_cursor: all[0]?.app ?? null, end_cursor: all.at(-1)?.app ?? null }, data: all };
    },
  );

  app.get(
    "/apps/:slug",
    { schema: { tags: ["apps"], summary: "One app: its auth (OAuth URLs and scopes, or the fields of a key-based account) and whether its OAuth client is set", params: AppParams, response: { 200: DataSchema(AppSchema), ...errorResponses } } },
    async (request) => ({ data: toAppView(await apps.get(request.params.slug)) }),
  );

  app.post(
    "/apps",
    {
      schema: {
        tags: ["apps"],
        summary: "Add an app of your own (admin): an internal OAuth server, or an API with keys",
        body: AppBodySchema,
        response: { 201: DataSchema(AppSchema), 403: ErrorBodySchema, 409: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => reply.code(201).send({ data: toAppView(await apps.create(principalOf(request).user, request.body)) }),
  );

  app.put(
    "/apps/:slug/oauth_client",
    {
      schema: {
        tags: ["apps"],
        summary: "Set an OAuth app's client id and secret (admin); the secret is sealed and never shown. The provider must accept <public URL>/oauth/callback as redirect URL",
        params: AppParams,
        body: OAuthClientBodySchema,
        response: { 200: DataSchema(AppSchema), 403: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request) => ({ data: toAppView(await apps.setClient(principalOf(request).user, request.params.slug, request.body)) }),
  );
};
