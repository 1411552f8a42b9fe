import type { Logger } from "pino";
import type { LiveTransport } from "./event-hub.js";

/** The live channel of "changed" messages. Emitter ids never start with `$`, so it is nobody's stream. */
export const CHANGED_CHANNEL = "$runnel:changed";

/** What changed: a workflow (its steps, props, activity) or a source (its code, props, activity, or it went). */
export type ChangedKind = "workflow" | "source";

/**
 * Invalidation of the caches that must agree between processes. Each
 * process keeps, for a second, the workflow and source rows its hot paths
 * read (DeliveryWorker, SourceCache, an api's endpoints, AwaitedResponses);
 * a change made through one process clears its own at once, and this
 * message clears the others'.
 *
 * `announce` resolves once the message is out (PUBLISH answered, NOTIFY
 * committed), and the change is announced before the request that made it
 * is answered: whatever the caller does next (an event, a wake-up) travels
 * after it on the same wire channel, so a worker reads the change before it
 * claims what the caller sent. A message that cannot be sent is logged: the
 * other processes then see the change within their cache's second.
 */
export class ChangesAcrossProcesses {
  constructor(
    private readonly transport: LiveTransport,
    private readonly logger: Logger,
  ) {}

  async announce(kind: ChangedKind, id: string): Promise<void> {
    try {
      await this.transport.publish(CHANGED_CHANNEL, { kind: "event", channel: kind, item: { id } });
    } catch (error) {
      this.logger.warn({ err: error, kind, id }, "could not tell the other processes of a change; they see it within a second (their caches' expiry)");
    }
  }

  /** Calls the handler of each change announced by any process (this one too: harmless, it forgot already) until the returned function is called. */
  listen(handlers: Record<ChangedKind, (id: string) => void>): Promise<() => Promise<void>> {
    return this.transport.subscribe(CHANGED_CHANNEL, (message) => {
      if (message.kind !== "event") return;
      const handler = handlers[message.channel as ChangedKind] as ((id: string) => void) | undefined;
      const id = (message.item as { id?: unknown } | null)?.id;
      if (handler && typeof id === "string") handler(id);
    });
  }
}
