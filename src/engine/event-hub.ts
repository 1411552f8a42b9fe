import { EventEmitter } from "node:events";

/** What live listeners (SSE streams) receive: a new event or log line, or the end of the emitter. */
export type HubMessage =
  | { kind: "event"; channel: string; item: unknown }
  | { kind: "log"; item: unknown }
  | { kind: "closed"; reason: string };

/**
 * In-process fan-out of what emitters produce, for live streams. The durable
 * copy is always in the store first; this only tells listeners that it is there.
 * (Scale-out will carry the same messages over PostgreSQL NOTIFY or Redis.)
 */
export class EventHub {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Each SSE client is one listener; there is no sensible fixed maximum.
    this.emitter.setMaxListeners(0);
  }

  publish(emitterId: string, message: HubMessage): void {
    this.emitter.emit(emitterId, message);
  }

  subscribe(emitterId: string, listener: (message: HubMessage) => void): () => void {
    this.emitter.on(emitterId, listener);
    return () => this.emitter.off(emitterId, listener);
  }
}
