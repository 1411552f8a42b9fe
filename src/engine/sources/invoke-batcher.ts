/**
 * Gathers a source's calls into batches: calls that arrive while the source
 * is busy wait in its queue and run together, up to 64 at a time, one batch
 * at a time under the source's mutex.
 */
import type { DeployedSource } from "../../domain/sources.js";
import type { ComponentCall } from "../../sandbox/protocol.js";
import type { KeyedMutex } from "../../domain/keyed-mutex.js";
import type { Waiting } from "./commit-chain.js";
import type { InvocationResult } from "./result-writer.js";
import type { Trigger } from "./run-limits.js";
import type { CallCarries, CallRequest } from "./sandbox-calls.js";
import { ChurningMap } from "../../domain/churning-map.js";

/** A call waiting for its source's next batch. */
export interface PendingCall extends CallRequest, Waiting {}

/** Calls run in one batch at most: bounds the wait of the first of them. */
const MAX_BATCH = 64;

export class InvokeBatcher {
  private readonly queues = new ChurningMap<string, { ownerId: string; items: PendingCall[] }>();

  /** `runBatch` runs a batch, under the source's mutex, and settles its calls. */
  constructor(
    private readonly mutex: KeyedMutex,
    private readonly runBatch: (ownerId: string, sourceId: string, batch: PendingCall[]) => Promise<void>,
  ) {}

  /** Queues `call` for the source's next batch; settles with its result once its batch has committed. */
  add(source: DeployedSource, call: ComponentCall, trigger: Trigger, carries: CallCarries): Promise<InvocationResult> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(source.id);
      if (!queue) {
        queue = { ownerId: source.ownerId, items: [] };
        this.queues.set(source.id, queue);
        this.scheduleBatch(source.id);
      }
      // Object.assign, not a leading spread: every call (see domain/own-copy.ts).
      queue.items.push(Object.assign({}, carries, { call, trigger, resolve, reject }));
    });
  }

  private scheduleBatch(sourceId: string): void {
    // A source at rest would start a batch for the first call of a burst alone, and the
    // rest of the burst would wait for it: its batch waits one turn of the event loop, so
    // that the requests read in the same turn join it. Its place in the mutex is taken now.
    const gather = !this.mutex.isHeld(sourceId);
    void this.mutex.run(sourceId, () => this.nextBatch(sourceId, gather));
  }

  /** Takes the source's next batch from its queue and runs it. */
  private async nextBatch(sourceId: string, gather: boolean): Promise<void> {
    if (gather) await afterPendingCallbacks();
    const queue = this.queues.get(sourceId);
    if (!queue) return;
    const batch = queue.items.splice(0, MAX_BATCH);
    if (queue.items.length === 0) this.queues.delete(sourceId);
    else this.scheduleBatch(sourceId);
    await this.runBatch(queue.ownerId, sourceId, batch);
  }
}

/** Resolves once the promise callbacks queued so far (and I/O callbacks ready now) have run. */
export function afterPendingCallbacks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
