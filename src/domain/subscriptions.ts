/**
 * A subscription ties an emitter (a source `dc_…`, a workflow `p_…`, or a glob
 * of the owner's: `dc_*`, `p_*`) and one of its channels to a listener
 * (a workflow). The bus records a delivery per matching event.
 */
export interface Subscription {
  id: string; // sub_…
  ownerId: string;
  emitterId: string;
  listenerId: string;
  /** A channel name; "" is the default channel; `$errors` and `$logs` are the platform's. */
  eventName: string;
  createdAt: number;
}

/** One event for one listener, recorded with the event, taken by the listener's runs. */
export interface Delivery {
  listenerId: string;
  emitterId: string;
  eventId: string;
  ownerId: string;
  subscriptionId: string;
  channel: string;
  status: "pending" | "running" | "done" | "failed";
  attempts: number;
  /** Times a run of it was cut off by its process dying (a start found it running, or its lease ran out). */
  interruptions: number;
  availableAt: number;
  createdAt: number;
}

/** What names one delivery: one event of one emitter for one listener. */
export type DeliveryKey = Pick<Delivery, "listenerId" | "emitterId" | "eventId">;

/** The glob that also matches `emitterId` (`dc_*` for a source), or null for other ids. */
export function globFor(emitterId: string): string | null {
  if (emitterId.startsWith("dc_")) return "dc_*";
  if (emitterId.startsWith("p_")) return "p_*";
  return null;
}
