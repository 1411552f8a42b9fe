import { Type, type Static } from "@sinclair/typebox";
import { toConfigurableProps } from "../../domain/component-rules.js";
import type { RegistryEntry, RegistryNamespace } from "../../domain/registry.js";
import type { ValidatedAppFile } from "../../domain/app-files.js";
import type { PublishedAppVersion, PublishedComponent, RegistryListing } from "../../engine/registry-service.js";
import { toEpochSeconds } from "./common.js";
import { ComponentSchema, toComponentView } from "./sources.js";

const JsonObject = Type.Record(Type.String(), Type.Unknown());

const NamespaceSchema = Type.Union([Type.Literal("catalog"), Type.Literal("user")], {
  description: "catalog: Runnel's own catalog, which every user sees; user: published by you.",
});

const KindSchema = Type.Union([Type.Literal("source"), Type.Literal("action"), Type.Literal("app")], {
  description: "source or action: a component, deployed by key; app: an app file (key = its slug), used by components through an app prop, never deployed.",
});

const RegistryEntryFields = {
  key: Type.String({ description: "The component's key (an app's: its slug), unique in your namespace with its version." }),
  version: Type.String({ description: "A semantic version; published versions never change." }),
  kind: KindSchema,
  published_at: Type.Integer({ description: "Epoch seconds." }),
};

/** An app file as published: what components get through an app prop of its slug. */
export const PublishedAppSchema = Type.Object(
  {
    app: Type.String({ description: "The app's name slug (its registry key)." }),
    name: Type.String(),
    version: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    prop_definitions: Type.Array(JsonObject, { description: "Its propDefinitions, as configurable_props show props; components copy them with propDefinition." }),
    methods: Type.Array(Type.String(), { description: "Its method names, called as this.<appProp>.<method>() in a component." }),
  },
  { title: "PublishedApp" },
);
type PublishedAppView = Static<typeof PublishedAppSchema>;

/** One published version, without its component. */
export const RegistryEntrySchema = Type.Object(RegistryEntryFields, { title: "RegistryEntry" });
export type RegistryEntryView = Static<typeof RegistryEntrySchema>;

/** One published version with its component, as GET /v1/components/<id> shows it (a catalog component: your copy of it). */
export const PublishedComponentSchema = Type.Object(
  {
    ...RegistryEntryFields,
    namespace: NamespaceSchema,
    component: Type.Optional(ComponentSchema),
    app: Type.Optional(PublishedAppSchema),
  },
  { title: "PublishedComponent", description: "component for a source or an action; app for an app file." },
);
export type PublishedComponentView = Static<typeof PublishedComponentSchema>;

/** One key of the registry listing: its newest version, described. */
export const RegistryListingSchema = Type.Object(
  {
    key: Type.String(),
    name: Type.String(),
    version: Type.String({ description: "The newest release (a pre-release only when there is no release)." }),
    description: Type.Union([Type.String(), Type.Null()]),
    type: KindSchema,
    namespace: NamespaceSchema,
    published_at: Type.Integer({ description: "When this version was published, epoch seconds." }),
    versions: Type.Array(Type.Object({ version: Type.String(), published_at: Type.Integer() }), { description: "Every published version, newest first." }),
    configurable_props: Type.Array(JsonObject, { description: "A component's props; empty for an app (see app)." }),
    app: Type.Optional(PublishedAppSchema),
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
    type: Type.Optional(Type.Union([Type.Literal("source"), Type.Literal("action"), Type.Literal("app")], { description: "Only sources, only actions, or only app files." })),
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

function toPublishedAppView(app: ValidatedAppFile): PublishedAppView {
  return {
    app: app.slug,
    name: app.name,
    version: app.version,
    description: app.description,
    // A definition is shown as a prop is: the same fields, the same flags.
    prop_definitions: toConfigurableProps({ props: app.propDefinitions }) as unknown as Array<Record<string, unknown>>,
    methods: app.methods,
  };
}

export function toPublishedComponentView(published: PublishedComponent | PublishedAppVersion): PublishedComponentView {
  if ("app" in published) {
    const { entry, app } = published;
    return { key: entry.slug, version: entry.version, kind: "app", published_at: toEpochSeconds(entry.publishedAt), namespace: published.namespace, app: toPublishedAppView(app) };
  }
  const { entry, namespace, component } = published;
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
    configurable_props: listing.validated ? (toConfigurableProps(listing.validated) as unknown as Array<Record<string, unknown>>) : [],
    ...(listing.app ? { app: toPublishedAppView(listing.app) } : {}),
  };
}
