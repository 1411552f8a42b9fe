import { Type, type Static } from "@sinclair/typebox";
import type { RegistryEntry } from "../../domain/registry.js";
import type { PublishedComponent } from "../../engine/registry-service.js";
import { toEpochSeconds } from "./common.js";
import { ComponentSchema, toComponentView } from "./sources.js";

const RegistryEntryFields = {
  key: Type.String({ description: "The component's key, unique in your namespace with its version." }),
  version: Type.String({ description: "A semantic version; published versions never change." }),
  kind: Type.Union([Type.Literal("source"), Type.Literal("action")]),
  published_at: Type.Integer({ description: "Epoch seconds." }),
};

/** One published version, without its component (the listing). */
export const RegistryEntrySchema = Type.Object(RegistryEntryFields, { title: "RegistryEntry" });
export type RegistryEntryView = Static<typeof RegistryEntrySchema>;

/** One published version with its component, as GET /v1/components/<id> shows it. */
export const PublishedComponentSchema = Type.Object({ ...RegistryEntryFields, component: ComponentSchema }, { title: "PublishedComponent" });
export type PublishedComponentView = Static<typeof PublishedComponentSchema>;

export const RegistryKeyParamsSchema = Type.Object({ key: Type.String() });

export const RegistryVersionQuerySchema = Type.Object(
  { version: Type.Optional(Type.String({ description: "An exact published version; without it, the highest release (a pre-release only when there is no release)." })) },
  { additionalProperties: false },
);

export function toRegistryEntryView(entry: RegistryEntry): RegistryEntryView {
  return { key: entry.key, version: entry.version, kind: entry.kind, published_at: toEpochSeconds(entry.publishedAt) };
}

export function toPublishedComponentView({ entry, component }: PublishedComponent): PublishedComponentView {
  return { ...toRegistryEntryView(entry), component: toComponentView(component.component, component.validated) };
}
