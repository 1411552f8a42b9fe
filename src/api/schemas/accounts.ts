import { Type, type Static } from "@sinclair/typebox";
import { workspaceIdOf, type ApiKey, type User } from "../../domain/accounts.js";
import { toEpochSeconds } from "./common.js";

export const WorkspaceSchema = Type.Object(
  {
    id: Type.String({ description: "o_…: the user's own workspace (every user has one)" }),
    orgname: Type.String(),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
  },
  { title: "Workspace" },
);

export const UserSchema = Type.Object(
  {
    id: Type.String({ description: "u_…" }),
    username: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    is_admin: Type.Boolean(),
    created_at: Type.Integer({ description: "Epoch seconds." }),
    orgs: Type.Array(WorkspaceSchema, { description: "The user's workspaces, as the hosted API lists them: one, the user's own" }),
  },
  { title: "User" },
);
export type UserView = Static<typeof UserSchema>;

export const ApiKeySchema = Type.Object(
  {
    id: Type.String({ description: "ak_…" }),
    name: Type.String(),
    prefix: Type.String({ description: "The first characters of the key, to tell keys apart." }),
    created_at: Type.Integer(),
    last_used_at: Type.Union([Type.Integer(), Type.Null()]),
    revoked_at: Type.Union([Type.Integer(), Type.Null()]),
  },
  { title: "ApiKey" },
);
export type ApiKeyView = Static<typeof ApiKeySchema>;

export const IssuedApiKeySchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    key: Type.String({ description: "The secret. Shown this once only: store it now." }),
  },
  { title: "IssuedApiKey" },
);
export type IssuedApiKeyView = Static<typeof IssuedApiKeySchema>;

export const CreateUserBodySchema = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 40, description: "Lower-case letters, digits, '-' and '_'." }),
    email: Type.Optional(Type.Union([Type.String({ maxLength: 254 }), Type.Null()], { description: "Where the user's error notices and $.send.email mails go." })),
    admin: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

export const UpdateUserBodySchema = Type.Object(
  {
    email: Type.Union([Type.String({ maxLength: 254 }), Type.Null()], {
      description: "Where your error notices and $.send.email mails go; null removes it (mails then stay in the outbox).",
    }),
  },
  { additionalProperties: false },
);

export const CreatedUserSchema = Type.Object({ ...UserSchema.properties, api_key: IssuedApiKeySchema }, { title: "CreatedUser" });
export type CreatedUserView = Static<typeof CreatedUserSchema>;

export const CreateApiKeyBodySchema = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 100 })) },
  { additionalProperties: false },
);

export function toWorkspaceView(user: User): Static<typeof WorkspaceSchema> {
  return { id: workspaceIdOf(user.id), orgname: user.username, name: user.username, email: user.email };
}

export function toUserView(user: User): UserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    is_admin: user.isAdmin,
    created_at: toEpochSeconds(user.createdAt),
    orgs: [toWorkspaceView(user)],
  };
}

export function toApiKeyView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: toEpochSeconds(key.createdAt),
    last_used_at: key.lastUsedAt === null ? null : toEpochSeconds(key.lastUsedAt),
    revoked_at: key.revokedAt === null ? null : toEpochSeconds(key.revokedAt),
  };
}
