import type { StoredEvent } from "../domain/sources.js";
import type { deliveriesFor, planAppend } from "./append-plan.js";
import { toDelivery } from "./kysely/subscription-queries.js";
import type { ClaimedDelivery, EventBatch } from "./store.js";
import { claimedState, deliveryOf, type TakenFollower } from "./run-gate-work.js";

type DeliveryRowPlan = ReturnType<typeof deliveriesFor>[number];

/** The delivery rows of an append, split by what EventBatch.claim and EventBatch.held ask for. */
export interface ClaimedRows {
  /** The rows to insert: recorded claimed by the caller when the batch has a claim, pending otherwise. */
  rows: DeliveryRowPlan[];
  /** Deliveries handed over without a row (EventBatch.held), already claimed by the caller. */
  unrecorded: ClaimedDelivery[];
}

/**
 * What every adapter does with an append's delivery rows before it writes
 * them (the same contract tests run on each): with a claim, each row is
 * recorded running, leased to the claimer, and those of held emits are not
 * written at all but handed over. The adapter answers a written row as
 * claimed only when its insert took (a row recorded before is not this
 * caller's to run).
 */
export function claimRows(batch: EventBatch, plan: ReturnType<typeof planAppend>, appended: StoredEvent[], rows: DeliveryRowPlan[]): ClaimedRows {
  if (!batch.claim) return { rows, unrecorded: [] };
  const { claimer, leaseMs } = batch.claim;
  const indexOf = batch.held?.size ? new Map(appended.map((event, index) => [event.id, index])) : undefined;
  const byId = indexOf ? new Map(appended.map((event) => [event.id, event])) : undefined;
  const recorded: DeliveryRowPlan[] = [];
  const unrecorded: ClaimedDelivery[] = [];
  for (const row of rows) {
    Object.assign(row, { status: "running", attempts: 1, available_at: batch.now + leaseMs, claimed_by: claimer });
    if (indexOf && isHeld(batch, plan, indexOf.get(row.event_id), row.listener_id)) unrecorded.push(Object.assign(claimedFrom(row, byId!.get(row.event_id)), { unrecorded: true as const }));
    else recorded.push(row);
  }
  return { rows: recorded, unrecorded };
}

/** A delivery row recorded claimed, as a claim would have answered it; its event is the appended one when given (no parse). */
export function claimedFrom(row: DeliveryRowPlan, event: StoredEvent | undefined): ClaimedDelivery {
  // Object.assign onto the fresh delivery, not a leading spread: once a run (see domain/own-copy.ts).
  return Object.assign(toDelivery(row), { event: event ? (event.event ?? null) : JSON.parse(row.payload), indexedAtMs: Number(row.indexed_at_ms ?? row.created_at) });
}

/** Whether the delivery of the appended event at `index` to `listenerId` is handed over unrecorded (EventBatch.held). */
function isHeld(batch: EventBatch, plan: ReturnType<typeof planAppend>, index: number | undefined, listenerId: string): boolean {
  if (index === undefined || index >= plan.accepted.length) return false;
  return batch.held?.get(plan.accepted[index]!)?.includes(listenerId) ?? false;
}

/**
 * The followers an admitted event took (run-gate-work.ts takeFollowers), on
 * its delivery: claimed as it is, by the same claimer, and handed over
 * without a row (their chain's record is their only write).
 */
export function withFollowers(head: ClaimedDelivery, taken: TakenFollower[], claim: { claimer: string | null; leaseMs: number }, now: number): void {
  if (taken.length === 0) return;
  head.lineKey = taken[0]!.gate_key;
  head.followers = taken.map((waiter) => Object.assign(claimedFrom(Object.assign(deliveryOf(waiter, now, now), claimedState(claim, now)), undefined), { unrecorded: true as const }));
}
