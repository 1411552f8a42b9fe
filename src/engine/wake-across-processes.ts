import type { Logger } from "pino";
import type { LiveTransport } from "./event-hub.js";

/** The live channel of wake-ups. Emitter ids never start with `$`, so it is nobody's stream. */
export const WAKE_CHANNEL = "$runnel:wake";

/**
 * What there is news of: deliveries appended (rows to claim, or to relay to
 * a shared queue), jobs queued by a relay (runs to claim), or timer
 * schedules changed.
 */
export type WakeTopic = "deliveries" | "jobs" | "timers";

/**
 * Wake-ups between processes. The work itself is in the store; a worker
 * would find it at its next poll (1 s for deliveries, 5 s for timers).
 * A small message on the live channel makes every worker look at once.
 *
 * Announcements are coalesced: while one of a topic is being published,
 * more of it make one more after it, not one each (an api process under
 * load appends many times a millisecond; one wake says all of it).
 */
export class WakeAcrossProcesses {
  private readonly inFlight = new Set<WakeTopic>();
  private readonly again = new Set<WakeTopic>();

  constructor(
    private readonly transport: LiveTransport,
    private readonly logger: Logger,
  ) {}

  announce(topic: WakeTopic): void {
    if (this.inFlight.has(topic)) {
      this.again.add(topic);
      return;
    }
    this.inFlight.add(topic);
    this.transport
      .publish(WAKE_CHANNEL, { kind: "event", channel: topic, item: null })
      .catch((error: unknown) => this.logger.warn({ err: error, topic }, "could not wake the other processes; their workers find the work at their next poll"))
      .finally(() => {
        this.inFlight.delete(topic);
        if (this.again.delete(topic)) this.announce(topic);
      });
  }

  /** Calls the handler of each topic announced by any process (this one too) until the returned function is called. */
  async listen(handlers: Partial<Record<WakeTopic, () => void>>): Promise<() => Promise<void>> {
    return this.transport.subscribe(WAKE_CHANNEL, (message) => {
      if (message.kind !== "event") return;
      const handler = handlers[message.channel as WakeTopic] as (() => void) | undefined;
      handler?.();
    });
  }
}
