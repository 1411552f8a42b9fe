/**
 * The source side of the delivery worker: a source subscribed to an emitter
 * (its own events, as the hosted service's scheduling components do) gets
 * each event as the event of its `run`. The call goes through the source's
 * invoker like an HTTP request or a timer tick, and its commit removes the
 * delivery in the same transaction as its events and logs: a crash before
 * it leaves the delivery to run again, after it there is nothing to run.
 *
 * A source's "run now" taken by an api process arrives here too (channel
 * `$run`, see ManualRunsOnWorkers): it runs as a manual run, and how it went
 * is reported to the api process waiting for it.
 */
import type { ClaimedDelivery, Store } from "../../store/store.js";
import type { SourceInvoker } from "../sources/invoker.js";
import { PartlyDone } from "../workflows/delivery-worker.js";
import { isSourceRun, type SourceRunBody, type SourceRunOutcome } from "../sources/manual-runs-on-workers.js";

export interface SourceListenerOptions {
  store: Store;
  invoker: SourceInvoker;
  /** Tells the api process waiting for a handed-over manual run how it went; absent in a process alone. */
  reportManualRun?: (requestId: string, outcome: SourceRunOutcome) => void;
}

export class SourceListener {
  constructor(private readonly options: SourceListenerOptions) {}

  /** Runs one listener's deliveries (they batch in the invoker); throws when any could not be committed, for a retry. */
  async run(deliveries: ClaimedDelivery[]): Promise<void> {
    const first = deliveries[0]!;
    const source = await this.options.store.findSource(first.ownerId, first.listenerId);
    const manual = deliveries.filter((delivery) => isSourceRun(delivery.channel));
    if (!source || (!source.active && manual.length === 0)) {
      // Deleted or deactivated: what it was sent is not run, as for a workflow.
      await this.options.store.dropDeliveries(deliveries);
      for (const delivery of manual) this.report(delivery, { kind: "gone" });
      return;
    }
    const settled = await Promise.allSettled(
      deliveries.map(async (delivery) => {
        const key = { listenerId: delivery.listenerId, emitterId: delivery.emitterId, eventId: delivery.eventId };
        if (!isSourceRun(delivery.channel)) {
          // A deactivated source still runs a "run now" (as in one process), but not what it subscribed to.
          if (!source.active) return this.options.store.dropDeliveries([delivery]);
          await this.options.invoker.invoke(source, { kind: "run", event: delivery.event }, "subscription", { delivery: key });
          return;
        }
        const body = delivery.event as Partial<SourceRunBody>;
        const result = await this.options.invoker.invoke(source, { kind: "run", event: body.event }, "manual", { delivery: key });
        this.report(delivery, { kind: "ran", ok: result.ok, durationMs: result.durationMs, events: result.events, ...(result.error ? { error: result.error } : {}) });
      }),
    );
    const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    // Those committed are done: only the others are tried again (a queue that settles outside the store would run them twice).
    if (failed) throw new PartlyDone(deliveries.filter((_, index) => settled[index]!.status === "fulfilled"), failed.reason);
  }

  private report(delivery: ClaimedDelivery, outcome: SourceRunOutcome): void {
    const requestId = (delivery.event as Partial<SourceRunBody> | null)?.request_id;
    if (typeof requestId === "string") this.options.reportManualRun?.(requestId, outcome);
  }
}
