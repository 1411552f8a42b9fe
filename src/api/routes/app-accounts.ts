import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { AppAccountsService } from "../../engine/apps/app-accounts-service.js";
import { principalOf } from "../request-context.js";
import { AccountBodySchema, AccountParams, AccountReconnectSchema, AccountRenameSchema, AccountSchema, OAuthStartAnswerSchema, OAuthStartSchema, toAccountView } from "../schemas/apps.js";
import { DataSchema, ErrorBodySchema, errorResponses, PageSchema, toEpochSeconds } from "../schemas/common.js";

const ReconnectAnswerSchema = Type.Union([AccountSchema, OAuthStartAnswerSchema]);

/**
 * Your connected accounts (`apn_…`): made from a key-based app's fields, or
 * through OAuth (start here, finish at /oauth/callback). Never a token or key
 * in an answer.
 */
export const appAccountsRoutes: FastifyPluginAsyncTypebox<{ appAccounts: AppAccountsService }> = async (app, { appAccounts }) => {
  app.get(
    "/accounts",
    {
      schema: {
        tags: ["accounts"],
        summary: "Your connected accounts: app, name, created, health (never a secret); ?app=<slug> for one app's (an account picker)",
        querystring: Type.Object({ app: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false }),
        response: { 200: PageSchema(AccountSchema), ...errorResponses },
      },
    },
    async (request) => {
      const app = request.query.app;
      const all = (await appAccounts.list(principalOf(request).user.id)).filter((entry) => app === undefined || entry.account.app === app).map(toAccountView);
      return { page_info: { total_count: all.length, count: all.length, start_cursor: all[0]?.id ?? null, end_cursor: all.at(-1)?.id ?? null }, data: all };
    },
  );

  app.post(
    "/accounts",
    {
      schema: { tags: ["accounts"], summary: "Connect an account of a key-based app: its fields are checked against the app's and sealed", body: AccountBodySchema, response: { 201: DataSchema(AccountSchema), ...errorResponses } },
    },
    async (request, reply) => reply.code(201).send({ data: toAccountView(await appAccounts.createWithKeys(principalOf(request).user.id, request.body)) }),
  );

  app.post(
    "/accounts/oauth/start",
    {
      schema: {
        tags: ["accounts"],
        summary: "Start connecting an OAuth app's account: open authorization_url in a browser; the callback stores the account",
        body: OAuthStartSchema,
        response: { 200: DataSchema(OAuthStartAnswerSchema), 409: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request) => {
      const started = await appAccounts.startOAuth(principalOf(request).user.id, request.body);
      return { data: { authorization_url: started.authorizationUrl, expires_at: toEpochSeconds(started.expiresAt) } };
    },
  );

  app.get(
    "/accounts/:id",
    { schema: { tags: ["accounts"], summary: "One of your connected accounts", params: AccountParams, response: { 200: DataSchema(AccountSchema), ...errorResponses } } },
    async (request) => ({ data: toAccountView(await appAccounts.get(principalOf(request).user.id, request.params.id)) }),
  );

  const rename = {
    schema: { tags: ["accounts"], summary: "Rename a connected account", params: AccountParams, body: AccountRenameSchema, response: { 200: DataSchema(AccountSchema), ...errorResponses } },
  };
  const renameHandler = async (request: { params: { id: string }; body: { name: string }; principal: Parameters<typeof principalOf>[0]["principal"] }) => ({
    data: toAccountView(await appAccounts.rename(principalOf(request).user.id, request.params.id, request.body)),
  });
  app.patch("/accounts/:id", rename, renameHandler);
  app.put("/accounts/:id", rename, renameHandler);

  app.post(
    "/accounts/:id/reconnect",
    {
      schema: {
        tags: ["accounts"],
        summary: "Reconnect an account, keeping its id: a key-based one takes new fields at once; an OAuth one answers an authorization_url to open",
        params: AccountParams,
        body: AccountReconnectSchema,
        response: { 200: DataSchema(ReconnectAnswerSchema), 409: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request) => {
      const outcome = await appAccounts.reconnect(principalOf(request).user.id, request.params.id, request.body ?? {});
      if ("entry" in outcome) return { data: toAccountView(outcome.entry) };
      return { data: { authorization_url: outcome.authorizationUrl, expires_at: toEpochSeconds(outcome.expiresAt) } };
    },
  );

  app.delete(
    "/accounts/:id",
    { schema: { tags: ["accounts"], summary: "Delete a connected account; runs of props configured with it fail with an AuthError saying so", params: AccountParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (request, reply) => {
      await appAccounts.remove(principalOf(request).user.id, request.params.id);
      return reply.code(204).send(null);
    },
  );
};
