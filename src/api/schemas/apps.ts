import { Type, type Static } from "@sinclair/typebox";
import type { AccountEntry } from "../../engine/apps/app-accounts-service.js";
import type { AppEntry } from "../../engine/apps/app-catalog.js";
import { toEpochSeconds } from "./common.js";

const KeyFieldSchema = Type.Object({ name: Type.String(), label: Type.String(), secret: Type.Boolean(), optional: Type.Boolean() });

export const AppSchema = Type.Object(
  {
    app: Type.String({ description: "The app's name slug, as components name it (app: \"github\")." }),
    name: Type.String(),
    shipped: Type.Boolean({ description: "Shipped with Runnel (true) or added by an admin." }),
    auth: Type.Object({
      type: Type.Union([Type.Literal("oauth"), Type.Literal("keys"), Type.Literal("none")]),
      authorize_url: Type.Optional(Type.String()),
      token_url: Type.Optional(Type.String()),
      scopes: Type.Optional(Type.Array(Type.String())),
      pkce: Type.Optional(Type.Boolean()),
      token_placement: Type.Optional(Type.String()),
      auth_fields: Type.Optional(Type.Array(Type.String(), { description: "The $auth fields an account gives." })),
      fields: Type.Optional(Type.Array(KeyFieldSchema)),
    }),
    oauth_client: Type.Union(
      [Type.Object({ client_id: Type.String(), source: Type.Union([Type.Literal("api"), Type.Literal("environment")]) }), Type.Null()],
      { description: "The OAuth client accounts connect with (its secret is never shown); null: none yet, or not an OAuth app." },
    ),
  },
  { title: "App" },
);

export const AppParams = Type.Object({ slug: Type.String({ maxLength: 64 }) });

export const AppBodySchema = Type.Object(
  {
    app: Type.String(),
    name: Type.String(),
    auth: Type.Object({}, { additionalProperties: true, description: "{ type: \"oauth\", authorize_url, token_url, scopes, pkce, client_auth, authorize_params, client_id, client_secret } or { type: \"keys\", fields: [{ name, label, secret, optional }] }" }),
  },
  { additionalProperties: false },
);

export const OAuthClientBodySchema = Type.Object({ client_id: Type.String(), client_secret: Type.String() }, { additionalProperties: false });

export function toAppView(entry: AppEntry): Static<typeof AppSchema> {
  const { definition, client } = entry;
  const auth = definition.auth;
  const view: Static<typeof AppSchema>["auth"] =
    auth.type === "oauth"
      ? { type: "oauth", authorize_url: auth.authorizeUrl, token_url: auth.tokenUrl, scopes: auth.scopes, pkce: auth.pkce, token_placement: auth.tokenPlacement, auth_fields: ["oauth_access_token", "oauth_refresh_token", "oauth_uid"] }
      : auth.type === "keys"
        ? { type: "keys", fields: auth.fields, auth_fields: auth.fields.map((field) => field.name) }
        : { type: "none" };
  return { app: definition.slug, name: definition.name, shipped: definition.shipped, auth: view, oauth_client: client ? { client_id: client.clientId, source: client.source } : null };
}

export const AccountSchema = Type.Object(
  {
    id: Type.String({ description: "apn_…: configure it on an app prop as { \"authProvisionId\": \"apn_…\" }." }),
    app: Type.String(),
    app_name: Type.String(),
    name: Type.String(),
    auth_type: Type.String(),
    health: Type.Union([Type.Literal("ok"), Type.Literal("needs_reconnect")]),
    health_message: Type.Union([Type.String(), Type.Null()], { description: "Why it must be reconnected." }),
    expires_at: Type.Union([Type.Integer(), Type.Null()], { description: "When the access token lapses (epoch seconds); it is refreshed before." }),
    created_at: Type.Integer({ description: "Epoch seconds." }),
    updated_at: Type.Integer({ description: "Epoch seconds." }),
  },
  { title: "ConnectedAccount" },
);

export const AccountParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const AccountBodySchema = Type.Object(
  {
    app: Type.String(),
    name: Type.String(),
    fields: Type.Record(Type.String(), Type.Unknown(), { description: "The app's fields (GET /v1/apps/<app> lists them)." }),
  },
  { additionalProperties: false },
);

export const AccountRenameSchema = Type.Object({ name: Type.String() }, { additionalProperties: false });
/** Optional: an OAuth account is reconnected with no body at all. */
export const AccountReconnectSchema = Type.Optional(Type.Object({ fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }, { additionalProperties: false }));
export const OAuthStartSchema = Type.Object({ app: Type.String(), name: Type.String() }, { additionalProperties: false });
export const OAuthStartAnswerSchema = Type.Object({
  authorization_url: Type.String({ description: "Open it in a browser; the provider sends it back to /oauth/callback, which stores the account." }),
  expires_at: Type.Integer({ description: "Epoch seconds: the link must be used before." }),
});

export function toAccountView(entry: AccountEntry): Static<typeof AccountSchema> {
  const { account, app } = entry;
  return {
    id: account.id,
    app: account.app,
    app_name: app.name,
    name: account.name,
    auth_type: app.auth.type,
    health: account.health,
    health_message: account.healthMessage,
    expires_at: account.expiresAt === null ? null : toEpochSeconds(account.expiresAt),
    created_at: toEpochSeconds(account.createdAt),
    updated_at: toEpochSeconds(account.updatedAt),
  };
}
