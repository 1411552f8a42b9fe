import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { LiveMessage } from "../job-queue.js";
import { LocalFanOut, parseEnvelope, type LiveChannel } from "../live-channel.js";
import { throttledWarning } from "./throttled-warning.js";

/**
 * Live messages over Redis pub/sub. A subscribed connection can do nothing
 * else, so it has one of its own; publishing goes through the queue's.
 * Fire and forget: a process that is not subscribed when a message goes
 * out never sees it (SSE streams read what they missed from the store).
 */
export class RedisLiveChannel implements LiveChannel {
  private readonly subscriber: Redis;
  private readonly fanOut = new LocalFanOut();
  private readonly ready: Promise<unknown>;

  constructor(
    private readonly publisher: Redis,
    private readonly wireChannel: string,
    logger: Logger,
  ) {
    this.subscriber = publisher.duplicate();
    this.subscriber.on("error", throttledWarning(logger, "live events: the Redis subscriber connection failed; reconnecting"));
    this.subscriber.on("message", (_wire: string, text: string) => {
      const envelope = parseEnvelope(text);
      if (envelope) this.fanOut.deliver(envelope);
    });
    // ioredis subscribes again by itself after a reconnect. A failure is reported to the first subscribe() that
    // waits for it, and never left unhandled (which would stop the process) when nobody subscribes.
    this.ready = this.subscriber.subscribe(wireChannel);
    this.ready.catch((error: unknown) => logger.warn({ err: error }, "live events: could not subscribe on Redis"));
  }

  async publish(channel: string, message: LiveMessage): Promise<void> {
    await this.publisher.publish(this.wireChannel, JSON.stringify({ channel, message }));
  }

  async subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>> {
    await this.ready;
    const remove = this.fanOut.add(channel, listener);
    return async () => remove();
  }

  async close(): Promise<void> {
    if (this.subscriber.status === "ready") await this.subscriber.quit().catch(() => this.subscriber.disconnect());
    else this.subscriber.disconnect();
  }
}
