import { Type, type Static } from "@sinclair/typebox";
import { toConfigurableProps } from "../../domain/component-rules.js";
import type { RegistryEntry, RegistryNamespace } from "../../domain/registry.js";
import type { PublishedComponent, RegistryListing } from "../../engine/registry-service.js";
import { toEpochSeconds } from "./common.js";
import { ComponentSchema, toComponentView } from "./sources.js";

const JsonObject = Type.Record(Type.String(), Type.Unknown());

const NamespaceSchema = Type.Union([Type.Literal("catalog"), Type.Literal("user")], {
  description: "catalog: Runnel's own catalog, which every user sees; user: published by you.",
});

const RegistryEntryFields = {
  key: Type.String({ description: "The component's key, unique in your namespace with its version." }),
  version: Type.String({ description: "A semantic version; published versions never change." }),
  kind: Type.Union([Type.Literal("source"), Type.Literal("action")]),
  published_at: Type.Integer({ description: "Epoch seconds." }),
};

/** One published version, without its component. */
export const RegistryEntrySchema = Type.Object(RegistryEntryFields, { title: "RegistryEntry" });
export type RegistryEntryView = Static<typeof RegistryEntrySchema>;

/** One published version with its component, as GET /v1/components/<id> shows it (a catalog component: your copy of it). */
export const PublishedComponentSchema = Type.Object({ ...RegistryEntryFields, namespace: NamespaceSchema, component: ComponentSchema }, { title: "PublishedComponent" });
export type PublishedComponentView = Static<typeof PublishedComponentSchema>;

/** One key of the registry listing: its newest version, described. */
export const RegistryListingSchema = Type.Object(
  {
    key: Type.String(),
    name: Type.String(),
    version: Type.String({ description: "The newest release (a pre-release only when there is no release)." }),
    description: Type.Union([Type.String(), Type.Null()]),
    type: Type.Union([Type.Literal("source"), Type.Literal("action")]),
    namespace: NamespaceSchema,
    published_at: Type.Integer({ description: "When this version was published, epoch seconds." }),
    versions: Type.Array(Type.Object({ version: Type.String(), published_at: Type.Integer() }), { description: "Every published version, newest first." }),
    configurable_props: Type.Array(JsonObject),
  },
  { title: "RegistryListing" },
);
export type RegistryListingView = Static<typeof RegistryListingSchema>;

export const RegistryListQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, default: 10, description: "Items per page, 1 to 100; more is taken as 100." })),
    after: Type.Optional(Type.String({ description: "An end_cursor (a key): the keys after it." })),
    before: Type.Optional(Type.String({ description: "A start_cursor (a key): the keys before it." })),
    q: Type.Optional(Type.String({ maxLength: 200, description: "Words that must all appear in the key, name or description, like \"new request\"." })),
    app: Type.Optional(Type.String({ maxLength: 100, description: "Only this app's components (keys that start with <app>-), like http." })),
    type: Type.Optional(Type.Union([Type.Literal("source"), Type.Literal("action")], { description: "Only sources, or only actions." })),
    namespace: Type.Optional(NamespaceSchema),
  },
  { additionalProperties: false },
);

export const RegistryKeyParamsSchema = Type.Object({ key: Type.String() });

export const RegistryVersionQuerySchema = Type.Object(
  { version: Type.Optional(Type.String({ description: "An exact published version; without it, the highest release (a pre-release only when there is no release)." })) },
  { additionalProperties: false },
);

export function toRegistryEntryView(entry: RegistryEntry): RegistryEntryView {
  return { key: entry.key, version: entry.version, kind: entry.kind, published_at: toEpochSeconds(entry.publishedAt) };
}

export function toPublishedComponentView({ entry, namespace, component }: PublishedComponent): PublishedComponentView {
  return { ...toRegistryEntryView(entry), namespace, component: toComponentView(component.component, component.validated) };
}

export function toRegistryListingView(listing: RegistryListing): RegistryListingView {
  return {
    key: listing.key,
    name: listing.name,
    version: listing.version,
    description: listing.description,
    type: listing.kind,
    namespace: listing.namespace satisfies RegistryNamespace,
    published_at: toEpochSeconds(listing.publishedAt),
    versions: listing.versions.map((entry) => ({ version: entry.version, published_at: toEpochSeconds(entry.publishedAt) })),
    configurable_props: toConfigurableProps(listing.validated) as unknown as Array<Record<string, unknown>>,
  };
}
