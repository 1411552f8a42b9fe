import type { RunError, Workflow } from "./workflows.js";

/** How the trigger of a run is named in `original_context.source_type`. */
export type SourceType = "HTTP" | "TIMER" | "COMPONENT" | "EMIT" | "REPLAY" | "MANUAL";

/** `original_context` of an error event (SEED "Error event summary"): every field present and typed. */
export interface OriginalContext {
  id: string;
  ts: string;
  workflow_id: string;
  deployment_id: string;
  source_type: string;
  verified: boolean;
  owner_id: string;
  platform_version: string;
}

/** The `event` of a `$errors` event, exactly as the seed gives it (with API-COMPAT's `msg`). */
export interface ErrorEventBody {
  original_event: unknown;
  original_context: OriginalContext;
  error: { code: string; msg: string; cellId: string; ts: string; stack: string };
}

export interface ErrorEventInput {
  workflow: Pick<Workflow, "id" | "ownerId" | "deploymentId">;
  /** The event that triggered the failed run, and its id and time. */
  originalEvent: unknown;
  originalEventId: string;
  originalEventAtMs: number;
  sourceType: SourceType;
  error: RunError;
  platformVersion: string;
}

/** The body of the `$errors` event a failed run emits. */
export function errorEventBody(input: ErrorEventInput): ErrorEventBody {
  return {
    original_event: input.originalEvent ?? null,
    original_context: {
      id: input.originalEventId,
      ts: new Date(input.originalEventAtMs).toISOString(),
      workflow_id: input.workflow.id,
      deployment_id: input.workflow.deploymentId,
      source_type: input.sourceType,
      // No trigger of Runnel's checks a sender's signature; a source that does can say so in its event.
      verified: false,
      owner_id: input.workflow.ownerId,
      platform_version: input.platformVersion,
    },
    error: { code: input.error.code, msg: input.error.msg, cellId: input.error.cellId, ts: input.error.ts, stack: input.error.stack },
  };
}

/** What source type a trigger emitter and channel make. */
export function sourceTypeOf(emitterId: string, channel: string, triggerKind: "http" | "timer" | "other"): SourceType {
  if (channel === "$replay") return "REPLAY";
  if (emitterId.startsWith("p_")) return "EMIT";
  if (triggerKind === "http") return "HTTP";
  if (triggerKind === "timer") return "TIMER";
  return "COMPONENT";
}
