import type { EventBatch } from "./store.js";

/**
 * How far behind a source's latest recorded tick its older ones are kept
 * (timer_tick_runs): a tick is run again when its worker died, once its lock
 * lapsed (one delivery lease, 30 s by default), or late by a few intervals
 * when no worker ran; an hour covers both with room.
 */
export const TICK_RUNS_KEPT_MS = 60 * 60 * 1000;

/** The batch without the emits of the ticks recorded before (EventBatch.ticks). */
export function withoutRepeatedTicks(batch: EventBatch, repeated: readonly number[]): EventBatch {
  const dropped = new Set(batch.ticks!.filter((tick) => repeated.includes(tick.dueAtMs)).flatMap((tick) => tick.emits));
  return { ...batch, emits: batch.emits.filter((emit) => !dropped.has(emit)) };
}
