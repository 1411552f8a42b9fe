import { Type } from "@sinclair/typebox";

/** A prop's options: `{label, value}` items (or plain values), and the context to send back for the next page. */
export const PropOptionsSchema = Type.Object(
  {
    options: Type.Array(Type.Unknown(), { description: "Static options, or what the options method returned" }),
    context: Type.Unknown({ description: "Send it back as prev_context for the next page; null for static options" }),
  },
  { title: "PropOptions" },
);
