import { Type, type Static } from "@sinclair/typebox";
import type { WaitingEvent } from "../../domain/run-gate.js";

/** One event waiting at a workflow's gate (settings.concurrency) for a free slot. */
export const WaitingEventSchema = Type.Object(
  {
    event_id: Type.String({ description: "The waiting event; cancel it with POST /v1/workflows/<id>/waiting/<event_id>/cancel." }),
    emitter_id: Type.String({ description: "Who emitted it (the trigger's source, or another workflow)." }),
    key: Type.Unknown({ description: "The value of settings.concurrency_key its line is for; null for the shared line (no key set, or the key missing from the event)." }),
    position: Type.Integer({ minimum: 1, description: "Its place in its line: 1 runs next (when a slot of its line frees)." }),
    waiting_since_ms: Type.Integer({ description: "When it arrived (epoch ms)." }),
  },
  { title: "WaitingEvent" },
);

export type WaitingEventView = Static<typeof WaitingEventSchema>;

export function toWaitingEventView(waiting: WaitingEvent): WaitingEventView {
  return { event_id: waiting.eventId, emitter_id: waiting.emitterId, key: waiting.key, position: waiting.position, waiting_since_ms: waiting.waitingSince };
}

/** Paging in line order, not newest first: the cursors are event ids. */
export const WaitingQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, default: 10, description: "Items per page, 1 to 100; more is taken as 100." })),
    before: Type.Optional(Type.String({ description: "A start_cursor (an event id): the page of events ahead of it." })),
    after: Type.Optional(Type.String({ description: "An end_cursor (an event id): the page of events behind it." })),
  },
  { additionalProperties: false },
);
