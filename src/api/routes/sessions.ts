import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { ValidationError } from "../../domain/errors.js";
import type { Sessions } from "../../engine/sessions.js";
import { requireOwnOrigin } from "../auth.js";
import { clearedSessionCookie, sessionCookie } from "../cookies.js";
import { principalOf } from "../request-context.js";
import { toUserView } from "../schemas/accounts.js";
import { DataSchema, ErrorBodySchema, errorResponses } from "../schemas/common.js";
import { CreateSessionBodySchema, SessionSchema, SignInLinkSchema } from "../schemas/sessions.js";

/** The public path of the sign-in route: it is how one gets a session, so it needs none. */
export const CREATE_SESSION_PATH = "/v1/sessions";

export interface SessionsRoutesOptions {
  sessions: Sessions;
  /** The server's public address, for the links and the cookie's Secure flag. */
  publicUrl: () => string;
}

/** The web console's sign-in (API key or one-time link), sign-out and `runnel open`'s links. */
export const sessionsRoutes: FastifyPluginAsyncTypebox<SessionsRoutesOptions> = async (app, { sessions, publicUrl }) => {
  const secure = () => publicUrl().startsWith("https:");

  app.post(
    "/sessions",
    {
      schema: {
        tags: ["sessions"],
        summary: "Sign in to the web console: exchange an API key or a one-time sign-in token for a session cookie (runnel_session)",
        security: [],
        body: CreateSessionBodySchema,
        response: { 201: DataSchema(SessionSchema), 403: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      // A browser always says where a POST comes from: another site must not sign a visitor in to an account of its choosing.
      if (request.headers.origin) requireOwnOrigin(request, publicUrl());
      const { api_key: apiKey, sign_in_token: signInToken } = request.body;
      if ((apiKey === undefined) === (signInToken === undefined)) {
        throw new ValidationError(apiKey === undefined ? "api_key" : "sign_in_token", "Send exactly one of api_key (your API key) and sign_in_token (from a sign-in link).");
      }
      const started = apiKey !== undefined ? await sessions.startWithApiKey(apiKey) : await sessions.startWithSignInToken(signInToken ?? "");
      reply.code(201).header("set-cookie", sessionCookie(started.token, { secure: secure(), expiresAt: started.expiresAt })).header("cache-control", "no-store");
      return { data: { user: toUserView(started.principal.user), expires_at: new Date(started.expiresAt).toISOString() } };
    },
  );

  app.delete(
    "/sessions/current",
    {
      schema: {
        tags: ["sessions"],
        summary: "Sign out of the web console: ends the session of the request's cookie and clears it",
        response: { 204: Type.Null({ description: "Signed out." }), 403: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal.sessionId) await sessions.end(principal.sessionId);
      return reply.code(204).header("set-cookie", clearedSessionCookie({ secure: secure() })).send(null);
    },
  );

  app.post(
    "/sessions/links",
    {
      schema: {
        tags: ["sessions"],
        summary: "A one-time link that signs a browser in to the console as you, valid for one minute (`runnel open`)",
        response: { 201: DataSchema(SignInLinkSchema), 403: ErrorBodySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const link = await sessions.createSignInLink(principalOf(request));
      reply.code(201).header("cache-control", "no-store");
      return { data: { url: `${publicUrl()}/sign-in#token=${link.token}`, expires_at: new Date(link.expiresAt).toISOString() } };
    },
  );
};
