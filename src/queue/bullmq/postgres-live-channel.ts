import pg from "pg";
import type { Logger } from "pino";
import type { LiveMessage } from "../job-queue.js";
import { LocalFanOut, parseEnvelope, type LiveChannel } from "../live-channel.js";

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_900;

/**
 * Live messages over PostgreSQL LISTEN/NOTIFY, for PostgreSQL alone (no
 * Redis). One connection listens; NOTIFY goes through a small pool. A
 * message too large for NOTIFY (8000 bytes) goes out as a stub with the
 * event's id and `truncated: true`: its listeners read the rest from the store.
 */
export class PostgresLiveChannel implements LiveChannel {
  private readonly fanOut = new LocalFanOut();
  private readonly pool: pg.Pool;
  private listener: pg.Client | null = null;
  private ready: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly wireChannel: string,
    private readonly logger: Logger,
  ) {
    this.pool = new pg.Pool({ connectionString, max: 2 });
    this.pool.on("error", (error) => logger.warn({ err: error }, "live events: a PostgreSQL connection failed"));
  }

  async publish(channel: string, message: LiveMessage): Promise<void> {
    let text = JSON.stringify({ channel, message });
    if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) text = JSON.stringify({ channel, message: tooLargeStub(message) });
    await this.pool.query("SELECT pg_notify($1, $2)", [this.wireChannel, text]);
  }

  async subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>> {
    await (this.ready ??= this.listen());
    const remove = this.fanOut.add(channel, listener);
    return async () => remove();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on("notification", (notification) => {
      const envelope = notification.payload ? parseEnvelope(notification.payload) : null;
      if (envelope) this.fanOut.deliver(envelope);
    });
    client.on("error", (error) => {
      // Messages sent while no connection listens are lost (the store has them); listen again on a new one.
      this.logger.warn({ err: error }, "live events: the PostgreSQL LISTEN connection failed; listening again");
      this.listener = null;
      this.ready = null;
      if (!this.closed) setTimeout(() => void (this.ready ??= this.listen()).catch(() => undefined), 1_000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${pg.escapeIdentifier(this.wireChannel)}`);
    this.listener = client;
  }
}

/** What a message too large for NOTIFY becomes: the event without its body (SSE clients read it from the store by id). */
function tooLargeStub(message: LiveMessage): LiveMessage {
  if (message.kind !== "event" && message.kind !== "log") return message;
  const item = message.item as { id?: unknown } | null;
  const stub = { id: typeof item?.id === "string" ? item.id : null, truncated: true };
  return message.kind === "event" ? { kind: "event", channel: message.channel, item: stub } : { kind: "log", item: stub };
}
