import { Type, type TSchema } from "@sinclair/typebox";

/** The body of every failed request. */
export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: "Stable error name, such as ValidationError or NotFound." }),
      message: Type.String({ description: "What happened and what to do, for a person." }),
      details: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description:
            "Machine-readable facts. A ValidationError names the offending input: `field` (its path in the request, like `configured_props.channel` or `steps[1].props.url`), `location` (body, querystring…) when the schema refused it, and, for a prop's value, `prop` (its bare name) and `step` (a workflow step's name), so a form can show the error at that input.",
        }),
      ),
    }),
  },
  { title: "ErrorBody" },
);

export const PageInfoSchema = Type.Object({
  total_count: Type.Integer(),
  count: Type.Integer(),
  start_cursor: Type.Union([Type.String(), Type.Null()]),
  end_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** `{page_info, data: [...]}`, the shape of every list. */
export function PageSchema<T extends TSchema>(item: T) {
  return Type.Object({ page_info: PageInfoSchema, data: Type.Array(item) });
}

/** `{data: {...}}`, the shape of every single object. */
export function DataSchema<T extends TSchema>(item: T) {
  return Type.Object({ data: item });
}

export const PageQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, default: 10, description: "Items per page, 1 to 100; more is taken as 100." })),
    before: Type.Optional(Type.String({ description: "A start_cursor: the page of newer items before it." })),
    after: Type.Optional(Type.String({ description: "An end_cursor: the page of older items after it." })),
  },
  { additionalProperties: false },
);

/** A workspace in the path, as the hosted API's workspace routes take it (`/orgs/<org_id>/…`). */
export const WorkspaceParams = Type.Object({ org_id: Type.String({ description: "o_…: your workspace, from /users/me/workspaces" }) });

/** Epoch seconds, as the hosted API gives times. */
export function toEpochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

export const errorResponses = {
  400: ErrorBodySchema,
  401: ErrorBodySchema,
  404: ErrorBodySchema,
  429: ErrorBodySchema,
  500: ErrorBodySchema,
  /** A component that failed while a caller waited, or a package registry that did not answer. */
  502: ErrorBodySchema,
};
