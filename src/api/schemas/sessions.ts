import { Type, type Static } from "@sinclair/typebox";
import { UserSchema } from "./accounts.js";

export const CreateSessionBodySchema = Type.Object(
  {
    api_key: Type.Optional(Type.String({ maxLength: 200, description: "An API key (rnl_…): the console's sign-in." })),
    sign_in_token: Type.Optional(Type.String({ maxLength: 200, description: "The token of a one-time sign-in link (`POST /v1/sessions/links`, `runnel open`)." })),
  },
  { additionalProperties: false, title: "CreateSessionBody", description: "Exactly one of api_key and sign_in_token." },
);
export type CreateSessionBody = Static<typeof CreateSessionBodySchema>;

export const SessionSchema = Type.Object(
  {
    user: UserSchema,
    expires_at: Type.String({ format: "date-time", description: "When the session ends at the latest; it also ends after 7 days without a request." }),
  },
  { title: "Session" },
);
export type SessionView = Static<typeof SessionSchema>;

export const SignInLinkSchema = Type.Object(
  {
    url: Type.String({ description: "The console's sign-in page with a one-time token in its fragment: open it in a browser." }),
    expires_at: Type.String({ format: "date-time", description: "One minute after it was made; it works once." }),
  },
  { title: "SignInLink" },
);
export type SignInLinkView = Static<typeof SignInLinkSchema>;
