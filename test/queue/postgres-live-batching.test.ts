import { randomBytes } from "node:crypto";
import pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenerName, PostgresLiveChannel } from "../../src/queue/bullmq/postgres-live-channel.js";
import type { LiveMessage } from "../../src/queue/job-queue.js";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";

/**
 * PostgreSQL alone carries live messages over NOTIFY: what is published in
 * one turn of the event loop travels packed, as few payloads as fit under
 * the 8000-byte limit, and arrives whole and in order. Each logical channel
 * is a PostgreSQL channel of its own, LISTENed to only where subscribed.
 */
describe("live messages over PostgreSQL NOTIFY, packed", () => {
  const wire = `live_batch_${randomBytes(4).toString("hex")}`;
  let publisher: PostgresLiveChannel;
  let subscriber: PostgresLiveChannel;
  let raw: pg.Client;
  const notifications: string[] = [];

  beforeAll(async () => {
    await requirePostgres();
    const logger = pino({ level: "silent" });
    publisher = new PostgresLiveChannel(TEST_DATABASE_URL, wire, logger);
    subscriber = new PostgresLiveChannel(TEST_DATABASE_URL, wire, logger);
    // A plain listener beside them: it counts the NOTIFYs themselves.
    raw = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await raw.connect();
    raw.on("notification", (notification) => notifications.push(notification.payload ?? ""));
    await raw.query(`LISTEN ${pg.escapeIdentifier(`${wire}:dc_batch`)}`);
  });
  afterAll(async () => {
    await publisher?.close();
    await subscriber?.close();
    await raw?.end();
  });

  it("sends 500 messages of one turn in a few NOTIFYs, each under the limit, received in order; a large one as a stub", async () => {
    const received: LiveMessage[] = [];
    const stop = await subscriber.subscribe("dc_batch", (message) => received.push(message));
    const messages: LiveMessage[] = Array.from({ length: 500 }, (_, i) => ({ kind: "event", channel: "default", item: { id: `${i}-0`, body: "x".repeat(100) } }));
    const large: LiveMessage = { kind: "event", channel: "default", item: { id: "500-0", body: "y".repeat(20_000) } };
    await Promise.all([...messages, large].map((message) => publisher.publish("dc_batch", message)));
    const deadline = Date.now() + 10_000;
    // The plain listener is a connection of its own: its NOTIFYs may come after the subscriber's, so it is waited
    // for too, until it has the last one (the stub).
    const rawHasAll = () => notifications.some((payload) => payload.includes('"500-0"'));
    while ((received.length < 501 || !rawHasAll()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received.slice(0, 500)).toEqual(messages);
    expect(received[500]).toEqual({ kind: "event", channel: "default", item: { id: "500-0", truncated: true } });
    // About 150 bytes an envelope: some fifty to a payload.
    expect(notifications.length).toBeGreaterThan(1);
    expect(notifications.length).toBeLessThanOrEqual(15);
    for (const payload of notifications) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
    await stop();
  });

  it("still reads a single envelope sent unpacked (a process of the previous release)", async () => {
    const received: LiveMessage[] = [];
    const stop = await subscriber.subscribe("dc_single", (message) => received.push(message));
    const message: LiveMessage = { kind: "closed", reason: "deleted" };
    await raw.query("SELECT pg_notify($1, $2)", [`${wire}:dc_single`, JSON.stringify({ channel: "dc_single", message })]);
    const deadline = Date.now() + 5_000;
    while (received.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toEqual([message]);
    await stop();
  });

  it("carries each channel on a PostgreSQL channel of its own: a process hears only what it subscribed to, in one statement a turn", async () => {
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      const heard: Array<{ channel: string; payload: string }> = [];
      other.on("notification", (notification) => heard.push({ channel: notification.channel, payload: notification.payload ?? "" }));
      // The one channel of the release before: nothing travels there any more.
      await other.query(`LISTEN ${pg.escapeIdentifier(wire)}`);
      await other.query(`LISTEN ${pg.escapeIdentifier(`${wire}:dc_b`)}`);
      const onA: LiveMessage[] = [];
      const stopA = await subscriber.subscribe("dc_a", (message) => onA.push(message));
      const messageA: LiveMessage = { kind: "event", channel: "default", item: { id: "1-0" } };
      const messageB: LiveMessage = { kind: "event", channel: "default", item: { id: "2-0" } };
      await Promise.all([publisher.publish("dc_a", messageA), publisher.publish("dc_b", messageB), publisher.publish("dc_a", messageA)]);
      const deadline = Date.now() + 5_000;
      while ((onA.length < 2 || heard.length < 1) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(onA).toEqual([messageA, messageA]);
      expect(heard).toEqual([{ channel: `${wire}:dc_b`, payload: JSON.stringify([{ channel: "dc_b", message: messageB }]) }]);
      await stopA();
    } finally {
      await other.end();
    }
  });

  it("names a channel too long for PostgreSQL by its digest, and still delivers to it alone", async () => {
    const long = `dc_${"x".repeat(80)}`;
    const nearly = `dc_${"x".repeat(79)}`;
    const onLong: LiveMessage[] = [];
    const onNearly: LiveMessage[] = [];
    const stopLong = await subscriber.subscribe(long, (message) => onLong.push(message));
    const stopNearly = await subscriber.subscribe(nearly, (message) => onNearly.push(message));
    const message: LiveMessage = { kind: "log", item: { id: "l-1" } };
    await publisher.publish(long, message);
    const deadline = Date.now() + 5_000;
    while (onLong.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(onLong).toEqual([message]);
    expect(onNearly).toEqual([]);
    await stopLong();
    await stopNearly();
  });

  it("stops hearing a channel once its last listener stops, and hears it again on a new subscription", async () => {
    const first: LiveMessage[] = [];
    const second: LiveMessage[] = [];
    const stopFirst = await subscriber.subscribe("dc_again", (message) => first.push(message));
    const stopSecond = await subscriber.subscribe("dc_again", (message) => second.push(message));
    await stopFirst();
    await stopFirst(); // a second stop changes nothing
    const one: LiveMessage = { kind: "event", channel: "default", item: { id: "1-0" } };
    await publisher.publish("dc_again", one);
    let deadline = Date.now() + 5_000;
    while (second.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(second).toEqual([one]);
    expect(first).toEqual([]);
    await stopSecond();
    const third: LiveMessage[] = [];
    const stopThird = await subscriber.subscribe("dc_again", (message) => third.push(message));
    const two: LiveMessage = { kind: "event", channel: "default", item: { id: "2-0" } };
    await publisher.publish("dc_again", two);
    deadline = Date.now() + 5_000;
    while (third.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(third).toEqual([two]);
    expect(second).toEqual([one]);
    await stopThird();
  });

  it("listens again to every channel it had, on a new connection, after its listening connection is cut", async () => {
    const own = new PostgresLiveChannel(TEST_DATABASE_URL, wire, pino({ level: "silent" }));
    try {
      const onOne: LiveMessage[] = [];
      const onTwo: LiveMessage[] = [];
      await own.subscribe("dc_one", (message) => onOne.push(message));
      await own.subscribe("dc_two", (message) => onTwo.push(message));
      // The listening connections of this test's channels (this one's and the subscriber's, which listens again too).
      const cut = await raw.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [listenerName(wire)]);
      expect(cut.rowCount).toBe(2);
      const one: LiveMessage = { kind: "event", channel: "default", item: { id: "1-0" } };
      const two: LiveMessage = { kind: "event", channel: "default", item: { id: "2-0" } };
      // Published until heard: what goes out while nobody listens is lost (streams read it from the store).
      const deadline = Date.now() + 10_000;
      while ((onOne.length === 0 || onTwo.length === 0) && Date.now() < deadline) {
        await Promise.all([publisher.publish("dc_one", one), publisher.publish("dc_two", two)]);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(onOne[0]).toEqual(one);
      expect(onTwo[0]).toEqual(two);
    } finally {
      await own.close();
    }
  }, 20_000);
});
