import { Type } from "@sinclair/typebox";

/** A prop's options: `{label, value}` items (or plain values), and the context to send back for the next page. */
export const PropOptionsSchema = Type.Object(
  {
    options: Type.Array(Type.Unknown(), { description: "Static options, or what the options method returned" }),
    context: Type.Unknown({ description: "Send it back as prev_context for the next page; null for static options" }),
  },
  { title: "PropOptions" },
);

/** POST /components/props/options: which component (not deployed yet), which prop, and what the form has so far. */
export const DraftPropOptionsBodySchema = Type.Object(
  {
    component: Type.Union(
      [
        Type.Object({ key: Type.String({ description: "A published key (the newest version) or a saved component's key" }), version: Type.Optional(Type.String()) }, { additionalProperties: false }),
        Type.Object({ id: Type.String({ description: "sc_…: a saved component (POST /v1/components)" }) }, { additionalProperties: false }),
      ],
      { description: '{"key", "version"?} or {"id": "sc_…"}' },
    ),
    prop: Type.String({ description: "The prop whose options to list" }),
    configured_props: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "The values of the props before it, as the form has them" })),
    page: Type.Optional(Type.Integer({ minimum: 0 })),
    prev_context: Type.Optional(Type.Unknown({ description: "The context the previous page answered" })),
    prevContext: Type.Optional(Type.Unknown({ description: "The same as prev_context, as the per-source route spells it" })),
    query: Type.Optional(Type.String({ description: "What the user typed to search" })),
  },
  { additionalProperties: false, title: "DraftPropOptionsBody" },
);
