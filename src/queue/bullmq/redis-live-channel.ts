import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { LiveMessage } from "../job-queue.js";
import { LocalFanOut, parseEnvelope, stopOnce, type LiveChannel } from "../live-channel.js";
import { throttledWarning } from "../throttled-warning.js";

/**
 * Live messages over Redis pub/sub. A subscribed connection can do nothing
 * else, so it has one of its own; publishing goes through the queue's.
 * Each logical channel (an emitter id, the wake-ups, the answers) is a
 * Redis channel of its own (`<prefix>:live:<channel>`), which a process
 * subscribes to only while it has a listener there: Redis hands a message
 * only to the processes that want it, where one channel for everything
 * made every process read and parse every message of the installation
 * (each run's events, each wake-up) to drop most of them.
 * Fire and forget: a process that is not subscribed when a message goes
 * out never sees it (SSE streams read what they missed from the store).
 */
export class RedisLiveChannel implements LiveChannel {
  private readonly subscriber: Redis;
  private readonly fanOut = new LocalFanOut();
  /** Logical channels subscribed on Redis, with their local listeners' count and the SUBSCRIBE's answer. */
  private readonly subscribed = new Map<string, { listeners: number; ready: Promise<unknown> }>();

  constructor(
    private readonly publisher: Redis,
    private readonly wirePrefix: string,
    private readonly logger: Logger,
  ) {
    this.subscriber = publisher.duplicate();
    this.subscriber.on("error", throttledWarning(logger, "live events: the Redis subscriber connection failed; reconnecting"));
    this.subscriber.on("message", (_wire: string, text: string) => {
      const envelope = parseEnvelope(text);
      if (envelope) this.fanOut.deliver(envelope);
    });
  }

  async publish(channel: string, message: LiveMessage): Promise<void> {
    await this.publisher.publish(this.wireChannel(channel), JSON.stringify({ channel, message }));
  }

  async subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>> {
    let entry = this.subscribed.get(channel);
    if (!entry) {
      // ioredis subscribes again by itself after a reconnect.
      entry = { listeners: 0, ready: this.subscriber.subscribe(this.wireChannel(channel)) };
      this.subscribed.set(channel, entry);
    }
    entry.listeners += 1;
    const remove = this.fanOut.add(channel, listener);
    try {
      await entry.ready;
    } catch (error) {
      remove();
      this.release(channel);
      throw error;
    }
    return stopOnce(() => {
      remove();
      this.release(channel);
    });
  }

  async close(): Promise<void> {
    if (this.subscriber.status === "ready") await this.subscriber.quit().catch(() => this.subscriber.disconnect());
    else this.subscriber.disconnect();
  }

  /** One listener fewer on `channel`; the last one unsubscribes it on Redis (a later subscribe comes after, on the same connection). */
  private release(channel: string): void {
    const entry = this.subscribed.get(channel);
    if (!entry || --entry.listeners > 0) return;
    this.subscribed.delete(channel);
    this.subscriber.unsubscribe(this.wireChannel(channel)).catch((error: unknown) => this.logger.debug({ err: error, channel }, "live events: could not unsubscribe on Redis"));
  }

  private wireChannel(channel: string): string {
    return `${this.wirePrefix}:${channel}`;
  }
}
