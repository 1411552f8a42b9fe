import pg from "pg";
import type { Logger } from "pino";
import type { LiveMessage } from "../job-queue.js";
import { LocalFanOut, parseEnvelopes, type LiveChannel } from "../live-channel.js";

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_900;

/**
 * Live messages over PostgreSQL LISTEN/NOTIFY, for PostgreSQL alone (no
 * Redis). One connection listens, another sends. A
 * message too large for NOTIFY (8000 bytes) goes out as a stub with the
 * event's id and `truncated: true`: its listeners read the rest from the store.
 *
 * Messages published in the same turn of the event loop travel together:
 * as many envelopes as fit in one payload (a JSON array), one NOTIFY each.
 * Under load every run publishes its events, logs and answer; one NOTIFY per
 * message took a query and PostgreSQL's notify-queue lock each, and made
 * PostgreSQL alone a fifth of the embedded server's throughput (bench --scale).
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
    this.pool = new pg.Pool({ connectionString, max: 1 });
    this.pool.on("error", (error) => logger.warn({ err: error }, "live events: a PostgreSQL connection failed"));
  }

  private sending: Promise<void> = Promise.resolve();
  private pending: Array<{ text: string; sent: { resolve: () => void; reject: (error: unknown) => void } }> = [];

  publish(channel: string, message: LiveMessage): Promise<void> {
    let text = JSON.stringify({ channel, message });
    // Room is kept for the array's brackets.
    if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES - 2) text = JSON.stringify({ channel, message: tooLargeStub(message) });
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ text, sent: { resolve, reject } });
    });
  }

  /** Sends what was published this turn, packed into as few payloads as fit, in the order it was published. */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    let payload: typeof batch = [];
    let bytes = 2;
    // One after the other: NOTIFYs of two connections at once may arrive in either order, and a stream's events must not.
    const send = (group: typeof batch) => {
      const text = `[${group.map((item) => item.text).join(",")}]`;
      const notify = () => this.pool.query("SELECT pg_notify($1, $2)", [this.wireChannel, text]);
      this.sending = this.sending
        // Once more after a moment on a failure (a connection refused while PostgreSQL is at max_connections):
        // a live message lost is an event a stream never shows.
        .then(() => notify().catch(() => new Promise((resolve) => setTimeout(resolve, 200)).then(notify)))
        .then(
          () => group.forEach((item) => item.sent.resolve()),
          (error: unknown) => group.forEach((item) => item.sent.reject(error)),
        );
    };
    for (const item of batch) {
      const size = Buffer.byteLength(item.text) + 1;
      if (payload.length > 0 && bytes + size > MAX_PAYLOAD_BYTES) {
        send(payload);
        payload = [];
        bytes = 2;
      }
      payload.push(item);
      bytes += size;
    }
    if (payload.length > 0) send(payload);
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
      for (const envelope of notification.payload ? parseEnvelopes(notification.payload) : []) this.fanOut.deliver(envelope);
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
