import { EventEmitter } from "node:events";

/** What live listeners (SSE streams) receive: a new event or log line, or the end of the emitter. */
export type HubMessage =
  | { kind: "event"; channel: string; item: unknown }
  | { kind: "log"; item: unknown }
  | { kind: "closed"; reason: string };

/** Live messages between processes: the job queue's publish/subscribe (Redis pub/sub, PostgreSQL NOTIFY). */
export interface LiveTransport {
  publish(channel: string, message: HubMessage): Promise<void>;
  subscribe(channel: string, listener: (message: HubMessage) => void): Promise<() => Promise<void>>;
}

/**
 * The fan-out of what emitters produce, for live streams. The durable copy
 * is always in the store first; this only tells listeners that it is there.
 *
 * One process: an in-process EventEmitter, nothing more on the hot path.
 * Several processes (`carryOver` a shared queue's transport): every message
 * goes over the wire and comes back to every process, this one included,
 * so a stream on any process sees what every process emits.
 */
export class EventHub {
  private readonly emitter = new EventEmitter();
  private transport: LiveTransport | null = null;
  private onPublishError: (error: unknown) => void = () => undefined;

  constructor() {
    // Each SSE client is one listener; there is no sensible fixed maximum.
    this.emitter.setMaxListeners(0);
  }

  /**
   * From now on messages travel over `transport` (a shared queue's). Set
   * before anything publishes or follows: listeners added before it would
   * hear only this process.
   */
  carryOver(transport: LiveTransport, onPublishError: (error: unknown) => void): void {
    this.transport = transport;
    this.onPublishError = onPublishError;
  }

  publish(emitterId: string, message: HubMessage): void {
    if (this.transport) {
      // Live messages are a courtesy (streams catch up from the store): a lost one is logged, never thrown at the emitter.
      this.transport.publish(emitterId, message).catch(this.onPublishError);
      return;
    }
    this.emitter.emit(emitterId, message);
  }

  /**
   * Listens to one emitter until the returned function is called. Resolves
   * once listening has begun (over the wire: once subscribed there), so a
   * caller that then reads the store misses nothing in between.
   */
  async follow(emitterId: string, listener: (message: HubMessage) => void, readEvent?: (eventId: string) => Promise<unknown>): Promise<() => void> {
    if (this.transport) {
      const stop = await this.transport.subscribe(emitterId, readEvent ? completingTruncated(listener, readEvent) : listener);
      return () => void stop().catch(() => undefined);
    }
    return this.subscribe(emitterId, listener);
  }

  /** This process's own listeners only (the local job queue's, and follow's without a transport). */
  subscribe(emitterId: string, listener: (message: HubMessage) => void): () => void {
    this.emitter.on(emitterId, listener);
    return () => this.emitter.off(emitterId, listener);
  }
}

/**
 * A transport may send a message too large for it (PostgreSQL NOTIFY: 8000
 * bytes) as a stub, `{ id, truncated: true }`. An event's stub is read back
 * from the store by its id; one that cannot be (a log line, a
 * `$.send.sse` payload, which are not events) is left out of the stream.
 */
function completingTruncated(listener: (message: HubMessage) => void, readEvent: (eventId: string) => Promise<unknown>): (message: HubMessage) => void {
  return (message) => {
    if (message.kind === "closed" || !isTruncated(message.item)) return listener(message);
    const { id } = message.item;
    if (message.kind !== "event" || id === null) return;
    readEvent(id)
      .then((item) => {
        if (item) listener({ kind: "event", channel: message.channel, item });
      })
      .catch(() => undefined);
  };
}

function isTruncated(item: unknown): item is { id: string | null; truncated: true } {
  return typeof item === "object" && item !== null && (item as { truncated?: unknown }).truncated === true;
}
