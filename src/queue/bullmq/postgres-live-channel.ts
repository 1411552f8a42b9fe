import { createHash } from "node:crypto";
import pg from "pg";
import type { Logger } from "pino";
import type { LiveMessage } from "../job-queue.js";
import { LocalFanOut, parseEnvelopes, stopOnce, type LiveChannel } from "../live-channel.js";

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_900;
/** A channel's name is an identifier: NOTIFY refuses one of more than 63 bytes (LISTEN would cut it short). */
const MAX_WIRE_BYTES = 63;
/**
 * Every payload of a flush, in one statement: a function scan hands the
 * rows out in the arrays' order, so the NOTIFYs of one channel keep theirs.
 */
const NOTIFY_ALL = { name: "runnel_live_notify", text: "SELECT count(pg_notify(wire, payload)) FROM unnest($1::text[], $2::text[]) AS notice(wire, payload)" };

/** The listening connection's application_name: the installation's channels are told apart by their prefix. */
export function listenerName(wirePrefix: string): string {
  return `runnel live: ${wirePrefix}`;
}

interface Pending {
  wire: string;
  text: string;
  /** The text's UTF-8 length, measured once. */
  bytes: number;
  sent: { resolve: () => void; reject: (error: unknown) => void };
}

/**
 * Live messages over PostgreSQL LISTEN/NOTIFY, for PostgreSQL alone (no
 * Redis). One connection listens, another sends. A message too large for
 * NOTIFY (8000 bytes) goes out as a stub with the event's id and
 * `truncated: true`: its listeners read the rest from the store.
 *
 * Each logical channel (an emitter id, the wake-ups, the answers) is a
 * PostgreSQL channel of its own (`<prefix>:<channel>`), which a process
 * LISTENs to only while it has a listener there, as on Redis. With one
 * channel for everything, each NOTIFY woke every process's listening
 * backend and every process, to parse and mostly drop the others' messages:
 * a worker read each run's events and answers, an api process every wake-up
 * (bench --scale: 4,000 of 6,000 payloads a process received in 6 s were not
 * for it).
 *
 * What is published in one turn of the event loop is sent together: as many
 * envelopes of a channel as fit in one payload (a JSON array), and every
 * payload of the turn in one statement. One NOTIFY statement per message
 * took a query and PostgreSQL's notify-queue lock each, and made PostgreSQL
 * alone a fifth of the embedded server's throughput.
 */
export class PostgresLiveChannel implements LiveChannel {
  private readonly fanOut = new LocalFanOut();
  private readonly pool: pg.Pool;
  /** The listening connection, made at the first subscription (and again after it fails). */
  private listener: Promise<pg.Client> | null = null;
  /** Channels LISTENed to, with their local listeners' count and the LISTEN's answer. */
  private readonly listened = new Map<string, { listeners: number; ready: Promise<void> }>();
  /** Other programs' channels (BullMQ's), whose payloads go as they are to these listeners. */
  private readonly foreign = new Map<string, Set<(payload: string) => void>>();
  private closed = false;
  private sending: Promise<void> = Promise.resolve();
  private pending: Pending[] = [];

  constructor(
    private readonly connectionString: string,
    private readonly wirePrefix: string,
    private readonly logger: Logger,
  ) {
    this.pool = new pg.Pool({ connectionString, max: 1 });
    this.pool.on("error", (error) => logger.warn({ err: error }, "live events: a PostgreSQL connection failed"));
  }

  publish(channel: string, message: LiveMessage): Promise<void> {
    let text = JSON.stringify({ channel, message });
    let bytes = Buffer.byteLength(text);
    // Room is kept for the array's brackets.
    if (bytes > MAX_PAYLOAD_BYTES - 2) {
      text = JSON.stringify({ channel, message: tooLargeStub(message) });
      bytes = Buffer.byteLength(text);
    }
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ wire: this.wireOf(channel), text, bytes, sent: { resolve, reject } });
    });
  }

  subscribe(channel: string, listener: (message: LiveMessage) => void): Promise<() => Promise<void>> {
    return this.listenFor(this.wireOf(channel), this.fanOut.add(channel, listener));
  }

  /**
   * Listens to a channel another program NOTIFYs (BullMQ's, when it adds a
   * job): each payload goes to `listener` as it is, until the returned
   * function is called.
   */
  subscribeForeign(wire: string, listener: (payload: string) => void): Promise<() => Promise<void>> {
    const listeners = this.foreign.get(wire) ?? new Set();
    this.foreign.set(wire, listeners.add(listener));
    return this.listenFor(wire, () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.foreign.get(wire) === listeners) this.foreign.delete(wire);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const listener = await this.listener?.catch(() => null);
    await listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  /** Sends what was published this turn in one statement: each channel's messages packed into as few payloads as fit, in the order they were published. */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    const payloads: Array<{ wire: string; items: Pending[]; bytes: number }> = [];
    const filling = new Map<string, (typeof payloads)[number]>();
    for (const item of batch) {
      const size = item.bytes + 1;
      let payload = filling.get(item.wire);
      if (!payload || payload.bytes + size > MAX_PAYLOAD_BYTES) {
        payload = { wire: item.wire, items: [], bytes: 2 };
        filling.set(item.wire, payload);
        payloads.push(payload);
      }
      payload.items.push(item);
      payload.bytes += size;
    }
    const values = [payloads.map((payload) => payload.wire), payloads.map((payload) => `[${payload.items.map((item) => item.text).join(",")}]`)];
    const notify = () => this.pool.query({ ...NOTIFY_ALL, values });
    // One flush after the other, on one connection: NOTIFYs of two connections at once may arrive in either order,
    // and a stream's events must not.
    this.sending = this.sending
      // Once more after a moment on a failure (a connection refused while PostgreSQL is at max_connections):
      // a live message lost is an event a stream never shows.
      .then(() => notify().catch(() => new Promise((resolve) => setTimeout(resolve, 200)).then(notify)))
      .then(
        () => batch.forEach((item) => item.sent.resolve()),
        (error: unknown) => batch.forEach((item) => item.sent.reject(error)),
      );
  }

  /** One listener more on `wire`: the first LISTENs (the others wait for that answer). */
  private async listen(wire: string): Promise<void> {
    let entry = this.listened.get(wire);
    if (!entry) {
      const ready = this.listening()
        .then((client) => client.query(`LISTEN ${pg.escapeIdentifier(wire)}`))
        .then(() => undefined);
      const made = { listeners: 0, ready };
      // A LISTEN that failed is asked again by the next subscriber, not answered with this failure for ever.
      ready.catch(() => {
        if (this.listened.get(wire) === made) this.listened.delete(wire);
      });
      entry = made;
      this.listened.set(wire, entry);
    }
    entry.listeners += 1;
    try {
      await entry.ready;
    } catch (error) {
      this.release(wire);
      throw error;
    }
  }

  /** One listener fewer on `wire`; the last one UNLISTENs (a later LISTEN goes after it, on the same connection). */
  private release(wire: string): void {
    const entry = this.listened.get(wire);
    if (!entry || --entry.listeners > 0) return;
    this.listened.delete(wire);
    void this.listener
      ?.then((client) => client.query(`UNLISTEN ${pg.escapeIdentifier(wire)}`))
      .catch((error: unknown) => this.logger.debug({ err: error, wire }, "live events: could not UNLISTEN on PostgreSQL"));
  }

  private listening(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error("The live channel is closed."));
    if (!this.listener) {
      const connecting = this.connectListener();
      this.listener = connecting;
      connecting.catch(() => {
        if (this.listener === connecting) this.listener = null;
      });
    }
    return this.listener;
  }

  private async connectListener(): Promise<pg.Client> {
    // Named, so that an operator (or a test) can tell it in pg_stat_activity.
    const client = new pg.Client({ connectionString: this.connectionString, application_name: listenerName(this.wirePrefix) });
    client.on("notification", (notification) => this.received(notification.channel, notification.payload ?? ""));
    client.on("error", (error) => {
      // Messages sent while no connection listens are lost (the store has them); listen again on a new one.
      this.logger.warn({ err: error }, "live events: the PostgreSQL LISTEN connection failed; listening again");
      this.listener = null;
      void client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.listenAgain(), 1_000).unref();
    });
    await client.connect();
    return client;
  }

  /** After the listening connection failed: every channel still wanted is LISTENed to on a new one (tried again each second until it works). */
  private async listenAgain(): Promise<void> {
    if (this.closed || this.listened.size === 0) return;
    try {
      const client = await this.listening();
      for (const wire of [...this.listened.keys()]) await client.query(`LISTEN ${pg.escapeIdentifier(wire)}`);
    } catch {
      if (!this.closed) setTimeout(() => void this.listenAgain(), 1_000).unref();
    }
  }

  private received(wire: string, payload: string): void {
    const foreign = this.foreign.get(wire);
    if (foreign) {
      for (const listener of [...foreign]) listener(payload);
      return;
    }
    for (const envelope of parseEnvelopes(payload)) this.fanOut.deliver(envelope);
  }

  /** The PostgreSQL channel of a logical one; a name too long for an identifier is named by its digest (the envelopes carry the logical channel, which the fan-out goes by). */
  private wireOf(channel: string): string {
    const wire = `${this.wirePrefix}:${channel}`;
    if (Buffer.byteLength(wire) <= MAX_WIRE_BYTES) return wire;
    return `live#${createHash("sha256").update(wire).digest("base64url")}`;
  }

  /**
   * LISTENs to `wire` for a listener that `remove` takes away again. The
   * answer stops it (once: a second call does nothing); a LISTEN that fails
   * removes it at once, and the failure is thrown.
   */
  private async listenFor(wire: string, remove: () => void): Promise<() => Promise<void>> {
    try {
      await this.listen(wire);
    } catch (error) {
      remove();
      throw error;
    }
    return stopOnce(() => {
      remove();
      this.release(wire);
    });
  }
}

/** What a message too large for NOTIFY becomes: the event without its body (SSE clients read it from the store by id). */
function tooLargeStub(message: LiveMessage): LiveMessage {
  if (message.kind !== "event" && message.kind !== "log") return message;
  const item = message.item as { id?: unknown } | null;
  const stub = { id: typeof item?.id === "string" ? item.id : null, truncated: true };
  return message.kind === "event" ? { kind: "event", channel: message.channel, item: stub } : { kind: "log", item: stub };
}
