import { EventEmitter } from "node:events";
import type { LiveMessage } from "./job-queue.js";

/** Live messages between processes: what a transport (Redis pub/sub, PostgreSQL NOTIFY) gives the queue. */
export interface LiveChannel {
  publish(channel: string, message: LiveMessage): Promise<void>;
  subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** What travels on the wire: the logical channel (an emitter id) with its message. */
export interface LiveEnvelope {
  channel: string;
  message: LiveMessage;
}

/**
 * The listeners of one process, by logical channel. A transport carries
 * every channel on one wire channel (one subscription per process, however
 * many SSE streams) and hands each envelope here, which fans it out.
 */
export class LocalFanOut {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Each SSE client is one listener; there is no sensible fixed maximum.
    this.emitter.setMaxListeners(0);
  }

  deliver(envelope: LiveEnvelope): void {
    this.emitter.emit(envelope.channel, envelope.message);
  }

  add(channel: string, listener: (message: LiveMessage) => void): () => void {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }
}

/** A subscription's stop, as the transports answer it: asynchronous, and doing its work once however often it is called. */
export function stopOnce(stop: () => void): () => Promise<void> {
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    stop();
  };
}

/** An envelope read off the wire, or null when it is not one (another program on the same channel). */
export function parseEnvelope(text: string): LiveEnvelope | null {
  try {
    return asEnvelope(JSON.parse(text));
  } catch {
    return null;
  }
}

/** The envelopes of a payload that carries one, or several as a JSON array; none when it is not ours. */
export function parseEnvelopes(text: string): LiveEnvelope[] {
  try {
    const value: unknown = JSON.parse(text);
    const items = Array.isArray(value) ? value : [value];
    return items.map(asEnvelope).filter((envelope): envelope is LiveEnvelope => envelope !== null);
  } catch {
    return [];
  }
}

function asEnvelope(value: unknown): LiveEnvelope | null {
  const candidate = value as Partial<LiveEnvelope> | null;
  return candidate && typeof candidate === "object" && typeof candidate.channel === "string" && candidate.message && typeof candidate.message === "object" ? (candidate as LiveEnvelope) : null;
}
