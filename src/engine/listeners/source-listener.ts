/**
 * The source side of the delivery worker: a source subscribed to an emitter
 * (its own events, as the hosted service's scheduling components do) gets
 * each event as the event of its `run`. The call goes through the source's
 * invoker like an HTTP request or a timer tick, and its commit removes the
 * delivery in the same transaction as its events and logs: a crash before
 * it leaves the delivery to run again, after it there is nothing to run.
 */
import type { ClaimedDelivery, Store } from "../../store/store.js";
import type { SourceInvoker } from "../sources/invoker.js";

export class SourceListener {
  constructor(private readonly options: { store: Store; invoker: SourceInvoker }) {}

  /** Runs one listener's deliveries (they batch in the invoker); throws when any could not be committed, for a retry. */
  async run(deliveries: ClaimedDelivery[]): Promise<void> {
    const first = deliveries[0]!;
    const source = await this.options.store.findSource(first.ownerId, first.listenerId);
    if (!source || !source.active) {
      // Deleted or deactivated: what it was sent is not run, as for a workflow.
      await this.options.store.dropDeliveries(deliveries);
      return;
    }
    const settled = await Promise.allSettled(
      deliveries.map((delivery) =>
        this.options.invoker.invoke(source, { kind: "run", event: delivery.event }, "subscription", undefined, {
          listenerId: delivery.listenerId,
          emitterId: delivery.emitterId,
          eventId: delivery.eventId,
        }),
      ),
    );
    const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    if (failed) throw failed.reason;
  }
}
