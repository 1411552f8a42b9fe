import { errorEventBody } from "../../domain/error-events.js";
import type { OutboxSend } from "../../domain/durable-sends.js";
import { sendRecord } from "../../domain/send-records.js";
import type { RunError, Workflow } from "../../domain/workflows.js";
import type { EventBatch } from "../../store/store.js";
import { RUNNEL_VERSION } from "../../version.js";

/**
 * The `$errors` event of a send given up after its last attempt: a
 * `DestinationFailed` error of the workflow, on the step that made the send,
 * with the run's trigger event (so it can be replayed). Routed as a failed
 * run's error is (errorAppend in run-state.ts): the error workflow unless
 * notifications are off; nowhere when the run was handling an error.
 */
export function destinationFailedAppend(workflow: Workflow, send: OutboxSend, message: string, now: number): EventBatch {
  const target = sendRecord({ type: send.type, payload: send.payload }, workflow.id, "failed").target;
  const msg = `$.send.${send.type} to ${target} failed ${send.attempts} time${send.attempts === 1 ? "" : "s"} and was given up: ${message}`;
  const error: RunError = { code: "DestinationFailed", msg, name: "DestinationFailed", cellId: send.context.cellId, ts: new Date(now).toISOString(), stack: `DestinationFailed: ${msg}` };
  const body = errorEventBody({
    workflow,
    originalEvent: send.context.originalEvent,
    originalEventId: send.context.originalEventId,
    originalEventAtMs: send.context.originalEventAtMs,
    sourceType: send.context.sourceType,
    error,
    platformVersion: RUNNEL_VERSION,
  });
  return {
    ownerId: workflow.ownerId,
    emitterId: workflow.id,
    emits: [{ event: body, name: "$errors", id: send.id, summary: `DestinationFailed: ${msg}`.slice(0, 200) }],
    dedupe: null,
    retention: workflow.settings.errorRetention,
    now,
    deliverTo: send.context.handlingError ? "none" : workflow.settings.errorNotifications ? "all" : "explicit",
  };
}
