import { compareEventIds } from "../domain/event-ids.js";
import { RUN_TRIM_EVERY, type WorkflowRun } from "../domain/workflows.js";
import type { AppendResult, ClaimedDelivery, EventBatch } from "./store.js";

/**
 * The parts of claiming deliveries and recording runs that are the same in
 * every adapter (as append-plan.ts is for appends); the adapters run the SQL.
 */

/** Claimed deliveries in the order they were recorded: oldest first, then by event id. */
export function deliveryOrder(a: ClaimedDelivery, b: ClaimedDelivery): number {
  return a.createdAt - b.createdAt || compareEventIds(a.eventId, b.eventId);
}

/** The appends of `runs` that must not happen: those of a run whose key was recorded before (a delivery run twice). */
export function staleAppend(batch: EventBatch, runs: WorkflowRun[], recorded: Set<string>): boolean {
  return batch.runId !== undefined && !recorded.has(batch.runId) && runs.some((run) => run.id === batch.runId);
}

export function noAppend(): AppendResult {
  return { events: [], accepted: [], rejected: [], deliveries: 0, logs: [] };
}

/**
 * When to trim a workflow's old runs: once every RUN_TRIM_EVERY runs it
 * records, not every batch, so the listing keeps about RUN_RETENTION.
 */
export class RunTrimSchedule {
  private readonly sinceTrim = new Map<string, number>();

  /** The workflows among `runs` whose trim is due now. */
  due(runs: WorkflowRun[]): string[] {
    const due: string[] = [];
    for (const run of runs) {
      const count = (this.sinceTrim.get(run.workflowId) ?? 0) + 1;
      this.sinceTrim.set(run.workflowId, count % RUN_TRIM_EVERY);
      if (count >= RUN_TRIM_EVERY) due.push(run.workflowId);
    }
    return due;
  }
}
