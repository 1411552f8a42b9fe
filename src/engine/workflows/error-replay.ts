import type { ErrorEventBody } from "../../domain/error-events.js";
import { ConflictError, NotFoundError, ValidationError } from "../../domain/errors.js";
import type { StoredEvent } from "../../domain/sources.js";
import type { Workflow } from "../../domain/workflows.js";
import type { NewDelivery, Store } from "../../store/store.js";
import { planReplay, type ReplayChoice, type ReplayPlan } from "./replay-from-step.js";

export interface ReplayFilter {
  /** These errors; absent: every listed error that passes the other filters. */
  eventIds?: string[] | undefined;
  /** Only errors with this `error.code`. */
  code?: string | undefined;
  /** Only errors of this step (`error.cellId`). */
  stepId?: string | undefined;
}

export interface Replayed {
  error_id: string;
  /** The id the replay run is keyed by (its trigger event id); the run's `replay_of` is `error_id`. */
  event_id: string;
}

/** An error of a bulk replay that could not be replayed as asked, and why (what a single replay answers 409 with). */
export interface NotReplayed {
  error_id: string;
  reason: string;
}

/**
 * Replays errors of a workflow: each error's `original_event` runs the
 * workflow again, as a durable delivery like any other (channel `$replay`,
 * carrying the event and the error it replays), from the trigger or from the
 * error's failed step, with the current code or the failed run's (see
 * replay-from-step.ts). One error that cannot be replayed so is a
 * ConflictError when it was asked for alone (`single`); in a bulk replay it
 * is listed in `notReplayed` and the others go on.
 */
export async function replayErrors(
  store: Store,
  workflow: Workflow,
  filter: ReplayFilter,
  choice: ReplayChoice,
  now: number,
  single = false,
): Promise<{ replayed: Replayed[]; notReplayed: NotReplayed[] }> {
  const errors = await errorsToReplay(store, workflow, filter);
  const planned: Array<{ error: StoredEvent; plan: ReplayPlan }> = [];
  const notReplayed: NotReplayed[] = [];
  for (const error of errors) {
    try {
      planned.push({ error, plan: await planReplay(store, workflow, error, choice) });
    } catch (failure) {
      if (single || !(failure instanceof ConflictError)) throw failure;
      notReplayed.push({ error_id: error.id, reason: failure.message });
    }
  }
  const batchMs = nextBatchMs(now);
  const deliveries: NewDelivery[] = planned.map(({ error, plan }, index) => {
    const body = error.event as ErrorEventBody;
    return {
      listenerId: workflow.id,
      emitterId: workflow.id,
      // `<epoch ms>-<sequence>` like every other event id, and unique per replay: the same error replayed twice runs twice.
      eventId: `${batchMs}-${index}`,
      ownerId: workflow.ownerId,
      subscriptionId: "replay",
      channel: "$replay",
      availableAt: now,
      createdAt: now,
      event: { original_event: body.original_event ?? null, replay_of: error.id, source_type: body.original_context?.source_type ?? "REPLAY", ...plan },
      indexedAtMs: now,
    };
  });
  if (deliveries.length > 0) await store.enqueueDeliveries(deliveries);
  return { replayed: deliveries.map((delivery, index) => ({ error_id: planned[index]!.error.id, event_id: delivery.eventId })), notReplayed };
}

/** The last millisecond a batch of replays or manual runs of this process took. */
let lastBatchMs = 0;

/**
 * The millisecond the event ids of a batch of replays (or of a manual run,
 * keyed the same way: workflow, workflow, id) start with: now, or one past
 * the previous batch's when that was as late, so that two in one millisecond
 * never share an id (which would make the second a no-op).
 */
export function nextBatchMs(now: number): number {
  lastBatchMs = Math.max(now, lastBatchMs + 1);
  return lastBatchMs;
}

async function errorsToReplay(store: Store, workflow: Workflow, filter: ReplayFilter): Promise<StoredEvent[]> {
  let errors: StoredEvent[];
  if (filter.eventIds) {
    if (filter.eventIds.length === 0) throw new ValidationError("event_ids", "event_ids is empty; give the ids of the errors to replay, or leave it out to replay them all.");
    errors = [];
    for (const id of filter.eventIds) {
      const event = await store.findEvent(workflow.ownerId, workflow.id, id);
      if (!event || event.channel !== "$errors") throw new NotFoundError("error event", id);
      errors.push(event);
    }
  } else {
    errors = [];
    let after: string | undefined;
    // Every listed error, oldest first (the listing keeps the most recent ones: at most the retention).
    for (;;) {
      const page = await store.listEvents(workflow.ownerId, workflow.id, { channel: "$errors", page: { limit: 100, after } });
      errors.push(...page.items);
      if (page.items.length < 100) break;
      after = page.items[page.items.length - 1]!.id;
    }
    errors.reverse();
  }
  return errors.filter((error) => {
    const body = error.event as Partial<ErrorEventBody> | null;
    if (filter.code !== undefined && body?.error?.code !== filter.code) return false;
    if (filter.stepId !== undefined && body?.error?.cellId !== filter.stepId) return false;
    return true;
  });
}
