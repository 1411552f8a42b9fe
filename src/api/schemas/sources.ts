import { Type, type Static } from "@sinclair/typebox";
import { toConfigurableProps, type ValidatedComponent } from "../../domain/component-rules.js";
import type { EmitterEventStats } from "../../domain/activity.js";
import type { DeployedSource, LogEntry, SavedComponent, StoredEvent } from "../../domain/sources.js";
import type { Workflow } from "../../domain/workflows.js";
import { publicConfiguredProps } from "../../engine/sources/props.js";
import { toEpochSeconds } from "./common.js";

const Json = Type.Unknown();
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const ComponentSchema = Type.Object(
  {
    id: Type.String({ description: "sc_…" }),
    code: Type.String(),
    code_hash: Type.String(),
    name: Type.String(),
    version: Type.String(),
    key: Type.Union([Type.String(), Type.Null()]),
    type: Type.Union([Type.Literal("source"), Type.Literal("action")]),
    description: Type.Union([Type.String(), Type.Null()]),
    configurable_props: Type.Array(JsonObject),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
  },
  { title: "Component" },
);
export type ComponentView = Static<typeof ComponentSchema>;

export const SourceSchema = Type.Object(
  {
    id: Type.String({ description: "dc_…" }),
    user_id: Type.String(),
    component_id: Type.String(),
    configured_props: JsonObject,
    active: Type.Boolean(),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    name: Type.String(),
    name_slug: Type.String(),
    endpoint_url: Type.Optional(Type.String()),
    component_key: Type.Union([Type.String(), Type.Null()]),
    retention: Type.Integer(),
    timeout_seconds: Type.Union([Type.Integer(), Type.Null()]),
    memory_mb: Type.Union([Type.Integer(), Type.Null()]),
    owned_by_workflow: Type.Union([Type.Object({ id: Type.String(), name: Type.String(), name_slug: Type.String() }), Type.Null()], {
      description: "The workflow whose own trigger this source is (declared inline in it): it is changed and deleted only with that workflow.",
    }),
    last_event_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "When the newest event it keeps was stored (ISO 8601); null when it keeps none." }),
    event_count: Type.Integer({ minimum: 0, description: "Events it keeps now, over all its channels (each keeps up to `retention`)." }),
  },
  { title: "Source" },
);
export type SourceView = Static<typeof SourceSchema>;

export const EventSummarySchema = Type.Object(
  {
    id: Type.String({ description: "<epoch ms>-<sequence>; also the paging cursor" }),
    indexed_at_ms: Type.Integer(),
    event: Type.Optional(Json),
    metadata: Type.Object({
      id: Type.Union([Type.String(), Type.Null()], { description: "The id the component gave $emit (its dedupe key); null when it gave none." }),
      emit_id: Type.String({ description: "The emit's id: the one the component gave $emit, else the event's own id." }),
      name: Type.String({ description: "The channel; \"\" for the default channel." }),
      emitter_id: Type.String(),
      summary: Type.Optional(Type.String()),
    }),
  },
  { title: "EventSummary" },
);
export type EventSummaryView = Static<typeof EventSummarySchema>;

export const LogSchema = Type.Object(
  { id: Type.String(), ts: Type.Integer(), stream: Type.String(), text: Type.String() },
  { title: "LogEntry" },
);

export const ComponentInputFields = {
  component_code: Type.Optional(Type.String({ description: "The component's code: CommonJS, an ES module or TypeScript." })),
  component_url: Type.Optional(Type.String({ description: "An http(s) URL of the component's raw code." })),
  filename: Type.Optional(Type.String({ description: "The file name the code came from (`.ts`, `.mjs`…)." })),
};

export const DeployBodySchema = Type.Object(
  {
    ...ComponentInputFields,
    component_id: Type.Optional(Type.String()),
    key: Type.Optional(Type.String()),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    configured_props: Type.Optional(JsonObject),
    retention: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: "Events kept per channel (default 100)." })),
    timeout_seconds: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3_600 }), Type.Null()], { description: "Time limit of each run (default: 30 for HTTP, 60 otherwise); null: the default." })),
    memory_mb: Type.Optional(Type.Union([Type.Integer({ minimum: 32, maximum: 8_192 }), Type.Null()], { description: "Heap limit of the runner (default 256); null: the default." })),
  },
  { additionalProperties: false },
);

export const UpdateBodySchema = Type.Object(
  { ...DeployBodySchema.properties, active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** Events over 1 KB are left out of summaries unless `expand=event` asks for them, as the hosted API does. */
const SUMMARY_EVENT_LIMIT_BYTES = 1024;

export function toComponentView(component: SavedComponent, validated: ValidatedComponent): ComponentView {
  return {
    id: component.id,
    code: component.code,
    code_hash: component.codeHash,
    name: component.name,
    version: component.version,
    key: component.key,
    type: component.kind,
    description: validated.description,
    configurable_props: toConfigurableProps(validated) as unknown as Array<Record<string, unknown>>,
    created_at: toEpochSeconds(component.createdAt),
    updated_at: toEpochSeconds(component.updatedAt),
  };
}

export const NO_EVENTS: EmitterEventStats = { count: 0, lastMs: null };

export function toSourceView(
  source: DeployedSource,
  validated: ValidatedComponent,
  endpointUrl: string | null,
  ownedBy: Workflow | null,
  events: EmitterEventStats = NO_EVENTS,
): SourceView {
  const view: SourceView = {
    id: source.id,
    user_id: source.ownerId,
    component_id: source.componentId,
    configured_props: publicConfiguredProps(validated, source, endpointUrl),
    active: source.active,
    created_at: toEpochSeconds(source.createdAt),
    updated_at: toEpochSeconds(source.updatedAt),
    name: source.name,
    name_slug: source.nameSlug,
    component_key: validated.key,
    retention: source.retention,
    timeout_seconds: source.limits?.timeoutSeconds ?? null,
    memory_mb: source.limits?.memoryMb ?? null,
    owned_by_workflow: ownedBy ? { id: ownedBy.id, name: ownedBy.name, name_slug: ownedBy.nameSlug } : null,
    last_event_at: events.lastMs === null ? null : new Date(events.lastMs).toISOString(),
    event_count: events.count,
  };
  if (endpointUrl) view.endpoint_url = endpointUrl;
  return view;
}

export function toEventSummary(event: StoredEvent, expand: boolean): EventSummaryView {
  const view: EventSummaryView = {
    id: event.id,
    indexed_at_ms: event.indexedAtMs,
    metadata: { id: event.emitId, emit_id: emitIdOf(event), name: event.channel, emitter_id: event.emitterId },
  };
  if (event.summary !== null) view.metadata.summary = event.summary;
  if (showsEvent(event, expand)) view.event = event.event;
  return view;
}

/** Whether a summary carries the event's body: always with expand=event, else only when it is small. */
export function showsEvent(event: StoredEvent, expand: boolean): boolean {
  return expand || JSON.stringify(event.event ?? null).length <= SUMMARY_EVENT_LIMIT_BYTES;
}

/** Never null, as clients of the hosted API read it as the emit's identity: the event's own id (unique per emitter) stands in. */
export function emitIdOf(event: StoredEvent): string {
  return event.emitId ?? event.id;
}

export function toLogView(log: LogEntry) {
  return { id: log.id, ts: log.ts, stream: log.stream, text: log.text };
}
