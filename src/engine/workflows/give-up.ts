import type { ClaimedDelivery } from "../../store/store.js";

/** Failed recordings of one delivery after which it is given up (with the backoff, about ten minutes of failing). */
export const MAX_FAILED_RECORDINGS = 10;

/** The executions each recorded run has had so far (its row's `attempt`), found by run key; may throw (the store is down). */
export type ExecutionsLookup = (ownerId: string, workflowId: string, keys: Array<{ emitterId: string; eventId: string }>) => Promise<Array<{ emitterId: string; eventId: string; attempt?: number | undefined }>>;

/**
 * Of the deliveries whose runs could not be recorded, those to give up. A
 * delivery's claims count every execution: those its run asked for (a step's
 * retries, a delay, a re-run: each is one more claim) and those that failed
 * to record. Only the failures count against MAX_FAILED_RECORDINGS, so that
 * a run deep in a long retry or polling series is not dropped at the first
 * hiccup of the store. When the store cannot say how many executions a run
 * had, nothing is given up: it is tried again later, never lost.
 */
export async function deliveriesToGiveUp<T extends ClaimedDelivery>(failed: T[], executionsOf: ExecutionsLookup): Promise<T[]> {
  const suspects = failed.filter((delivery) => delivery.attempts >= MAX_FAILED_RECORDINGS);
  if (suspects.length === 0) return [];
  // Sources and webhooks have no waiting runs: every claim of theirs was an attempt.
  const ofWorkflows = suspects.filter((delivery) => delivery.listenerId.startsWith("p_"));
  const given = suspects.filter((delivery) => !delivery.listenerId.startsWith("p_"));
  const byWorkflow = new Map<string, T[]>();
  for (const delivery of ofWorkflows) byWorkflow.set(delivery.listenerId, [...(byWorkflow.get(delivery.listenerId) ?? []), delivery]);
  for (const [workflowId, deliveries] of byWorkflow) {
    let rows: Awaited<ReturnType<ExecutionsLookup>>;
    try {
      rows = await executionsOf(deliveries[0]!.ownerId, workflowId, deliveries.map(({ emitterId, eventId }) => ({ emitterId, eventId })));
    } catch {
      continue;
    }
    for (const delivery of deliveries) {
      const row = rows.find((candidate) => candidate.emitterId === delivery.emitterId && candidate.eventId === delivery.eventId);
      // The claim of the current execution is one of its run's planned ones.
      const planned = row?.attempt ?? 0;
      if (delivery.attempts - planned >= MAX_FAILED_RECORDINGS) given.push(delivery);
    }
  }
  return given;
}
