import { randomBytes } from "node:crypto";
import pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresLiveChannel } from "../../src/queue/bullmq/postgres-live-channel.js";
import type { LiveMessage } from "../../src/queue/job-queue.js";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";

/**
 * PostgreSQL alone carries live messages over NOTIFY: what is published in
 * one turn of the event loop travels packed, as few payloads as fit under
 * the 8000-byte limit, and arrives whole and in order.
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
    await raw.query(`LISTEN ${pg.escapeIdentifier(wire)}`);
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
    await raw.query("SELECT pg_notify($1, $2)", [wire, JSON.stringify({ channel: "dc_single", message })]);
    const deadline = Date.now() + 5_000;
    while (received.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toEqual([message]);
    await stop();
  });
});
