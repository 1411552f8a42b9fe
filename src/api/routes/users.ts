import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Accounts } from "../../engine/accounts.js";
import { principalOf } from "../request-context.js";
import { CreateUserBodySchema, CreatedUserSchema, UpdateUserBodySchema, toApiKeyView, toUserView, toWorkspaceView, UserSchema, WorkspaceSchema } from "../schemas/accounts.js";
import { DataSchema, errorResponses, ErrorBodySchema, PageQuerySchema, PageSchema } from "../schemas/common.js";
import { parsePageRequest, toPage } from "../../domain/paging.js";

export const usersRoutes: FastifyPluginAsyncTypebox<{ accounts: Accounts }> = async (app, { accounts }) => {
  app.get(
    "/users/me",
    {
      schema: {
        tags: ["users"],
        summary: "The user of the API key",
        response: { 200: DataSchema(UserSchema), ...errorResponses },
      },
    },
    async (request) => ({ data: toUserView(principalOf(request).user) }),
  );

  app.patch(
    "/users/me",
    {
      schema: {
        tags: ["users"],
        summary: "Change your own account: `email`, where error notices and $.send.email mails go (null removes it)",
        body: UpdateUserBodySchema,
        response: { 200: DataSchema(UserSchema), ...errorResponses },
      },
    },
    async (request) => ({ data: toUserView(await accounts.updateOwnEmail(principalOf(request), request.body.email)) }),
  );

  app.get(
    "/users/me/workspaces",
    {
      schema: {
        tags: ["users"],
        summary: "The user's workspaces, as the hosted API lists them: one, the user's own",
        response: { 200: DataSchema(Type.Array(WorkspaceSchema)), ...errorResponses },
      },
    },
    async (request) => ({ data: [toWorkspaceView(principalOf(request).user)] }),
  );

  app.get(
    "/users",
    {
      schema: {
        tags: ["users"],
        summary: "Every user of the server, newest first (admins only)",
        querystring: PageQuerySchema,
        response: { 200: PageSchema(UserSchema), 403: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request) => {
      const slice = await accounts.listUsers(principalOf(request), parsePageRequest(request.query));
      return toPage({ items: slice.items.map(toUserView), totalCount: slice.totalCount }, (user) => user.id);
    },
  );

  app.post(
    "/users",
    {
      schema: {
        tags: ["users"],
        summary: "Create a user (admins only); answers with the user's first API key, once",
        body: CreateUserBodySchema,
        response: { 201: DataSchema(CreatedUserSchema), 403: ErrorBodySchema, 409: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { user, issued } = await accounts.createUser(principalOf(request), {
        username: request.body.username,
        email: request.body.email,
        isAdmin: request.body.admin,
      });
      reply.code(201);
      return { data: { ...toUserView(user), api_key: { ...toApiKeyView(issued.key), key: issued.secret } } };
    },
  );
};
