import { Type, type Static } from "@sinclair/typebox";
import { MAX_ENV_NAME_LENGTH } from "../../domain/env-vars.js";
import type { EnvVar } from "../../domain/env-vars.js";
import { toEpochSeconds } from "./common.js";

export const EnvVarSchema = Type.Object(
  {
    name: Type.String(),
    value: Type.Union([Type.String(), Type.Null()], { description: "null for a secret variable: its value is never shown again." }),
    secret: Type.Boolean(),
    created_at: Type.Integer({ description: "Epoch seconds." }),
    updated_at: Type.Integer({ description: "Epoch seconds." }),
  },
  { title: "EnvVar" },
);

export const EnvVarParams = Type.Object({
  name: Type.String({ maxLength: MAX_ENV_NAME_LENGTH, description: "Letters, digits and _, not starting with a digit (API_TOKEN)." }),
});

export const EnvVarBodySchema = Type.Object(
  {
    value: Type.String({ description: "At most 64 KB. Steps receive it where a prop says {{process.env.<NAME>}}." }),
    secret: Type.Optional(Type.Boolean({ default: false, description: "Stored sealed with the master key and never shown again." })),
  },
  { additionalProperties: false },
);

export function toEnvVarView(envVar: EnvVar): Static<typeof EnvVarSchema> {
  return {
    name: envVar.name,
    value: envVar.secret ? null : envVar.value,
    secret: envVar.secret,
    created_at: toEpochSeconds(envVar.createdAt),
    updated_at: toEpochSeconds(envVar.updatedAt),
  };
}
