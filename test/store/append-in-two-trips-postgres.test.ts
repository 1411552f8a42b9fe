import fc from "fast-check";
import { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { Workflow } from "../../src/domain/workflows.js";
import { createKyselyStore } from "../../src/store/kysely/kysely-store.js";
import { CurrentSchemaPostgresDialect } from "../../src/store/postgres/current-schema-dialect.js";
import { inlineParameters, oneTripOn, tripSessionOn, type TripSession } from "../../src/store/postgres/one-trip.js";
import { statementText } from "../../src/store/postgres/prepared-statements.js";
import type { EventBatch, Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { countedTrips, migratedTestSchema } from "../helpers/postgres.js";
import { parameterValues } from "../helpers/sql-values.js";
import { newUserInput } from "./store-contract.js";

/**
 * appendEvents on PostgreSQL in two messages (append-in-two-trips.ts), and
 * the statements of such messages kept prepared per connection
 * (prepared-statements.ts): the same rows as the usual path writes, for any
 * sequence of appends; a one-at-a-time line joined in the second message;
 * and the usual path taking over, with nothing half written, wherever the
 * plan does not hold.
 */
describe("appends in two messages on PostgreSQL", () => {
  let schema: Awaited<ReturnType<typeof migratedTestSchema>>["schema"];
  let pool: pg.Pool;
  /** Appends in two messages, counted. */
  let store: Store;
  /** The same tables, appends the usual way only. */
  let usual: Store;
  let messages: { sent: number; failed: number };
  let ownerId: string;

  beforeAll(async () => {
    ({ schema, pool } = await migratedTestSchema("runnel_two_trips"));
    const session = tripSessionOn(pool);
    messages = { sent: 0, failed: 0 };
    const counted: TripSession = (work) => session((send) => work(countedTrips(send, messages)));
    const db = new Kysely<any>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
    store = createKyselyStore({ kind: "postgres", db, isUniqueViolation: () => false, oneTrip: oneTripOn(pool), tripSession: counted });
    usual = createKyselyStore({ kind: "postgres", db, isUniqueViolation: () => false });
    ownerId = (await store.createUser(newUserInput())).id;
  });
  afterAll(async () => {
    await pool?.end();
    await schema?.drop();
  });

  const emitterId = () => `dc_${newId("deployedComponent").split("_").pop()}`;

  async function listener(emitter: string, settings: Partial<Workflow["settings"]> = {}): Promise<Workflow> {
    const workflow = await store.createWorkflow(workflowFor(ownerId, `wf-${Math.random().toString(36).slice(2, 8)}`, { settings: { errorNotifications: true, errorRetention: 100, ...settings } }));
    await store.subscribe({ id: newId("subscription"), ownerId, emitterId: emitter, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
    return workflow;
  }

  const batch = (emitter: string, events: unknown[], extra: Partial<EventBatch> = {}): EventBatch => ({ ownerId, emitterId: emitter, emits: events.map((event) => ({ event })), dedupe: null, retention: 1000, now: Date.now(), ...extra });

  async function rowsOf(emitter: string) {
    const events = await pool.query("SELECT ms, seq, channel, summary, emit_id, event FROM events WHERE emitter_id = $1 ORDER BY ms, seq", [emitter]);
    const state = await pool.query("SELECT last_ms, last_seq, dedupe_state, channel_counts FROM emitter_state WHERE emitter_id = $1", [emitter]);
    const deliveries = await pool.query("SELECT event_id, status, payload FROM deliveries WHERE emitter_id = $1 ORDER BY event_id", [emitter]);
    return { events: events.rows, state: state.rows, deliveries: deliveries.rows };
  }

  it("takes an emitter's appends after its first in two messages, and the first (no state row yet) the usual way", async () => {
    const emitter = emitterId();
    await listener(emitter);
    const before = { ...messages };
    const first = await store.appendEvents(batch(emitter, [{ n: 0 }]));
    // The first message found no state row: rolled back (a second message), then the usual path.
    expect(messages.sent - before.sent).toBe(2);
    const again = { ...messages };
    const second = await store.appendEvents(batch(emitter, [{ n: 1 }, { n: 2 }]));
    expect(messages.sent - again.sent).toBe(2);
    expect(messages.failed).toBe(before.failed);
    expect(first.deliveries).toBe(1);
    expect(second.deliveries).toBe(2);
    expect(second.events.map((event) => event.event)).toEqual([{ n: 1 }, { n: 2 }]);
    const { events, deliveries } = await rowsOf(emitter);
    expect(events.map((row) => JSON.parse(row.event))).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(deliveries.map((row) => [row.status, JSON.parse(row.payload)])).toEqual([
      ["pending", { n: 0 }],
      ["pending", { n: 1 }],
      ["pending", { n: 2 }],
    ]);
  });

  it("writes exactly what the usual path writes, for any sequence of appends (ids, dedupe, retention per channel, deliveries, the emitter's state)", async () => {
    const emit = fc.record({ channel: fc.constantFrom("", "other"), id: fc.option(fc.constantFrom("a", "b", "c", "d"), { nil: undefined }), n: fc.integer({ min: 0, max: 9 }) });
    const appendBatch = fc.array(emit, { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(fc.array(appendBatch, { minLength: 1, maxLength: 6 }), fc.constantFrom(null, "unique" as const, "greatest" as const), fc.integer({ min: 1, max: 4 }), async (batches, dedupe, retention) => {
        const [twoTrips, usualWay] = [emitterId(), emitterId()];
        await listener(twoTrips);
        await listener(usualWay);
        let now = 1_800_000_000_000;
        for (const emits of batches) {
          now += 1;
          const make = (emitter: string): EventBatch => ({
            ownerId,
            emitterId: emitter,
            emits: emits.map((one) => ({ name: one.channel, event: { n: one.n }, ...(one.id === undefined ? {} : { id: one.id }) })),
            dedupe: dedupe === null ? null : dedupe === "unique" ? "unique" : "greatest",
            retention,
            now,
          });
          const sentBefore = messages.sent;
          const [fast, slow] = [await store.appendEvents(make(twoTrips)), await usual.appendEvents(make(usualWay))];
          // Two messages each: both written, or for the emitter's first append (no state row) the first and its rollback.
          expect(messages.sent - sentBefore).toBe(2);
          expect({ ...fast, events: fast.events.map(({ emitterId: _, ...rest }) => rest) }).toEqual({ ...slow, events: slow.events.map(({ emitterId: _, ...rest }) => rest) });
        }
        const [fastRows, slowRows] = [await rowsOf(twoTrips), await rowsOf(usualWay)];
        expect(fastRows).toEqual(slowRows);
      }),
      { numRuns: 25 },
    );
    // The sequences went the two-message way, bar each emitter's first append.
    expect(messages.failed).toBe(0);
  });

  it("joins a one-at-a-time line in its second message: the first admitted and handed over claimed, the others waiting in arrival order", async () => {
    const emitter = emitterId();
    const workflow = await listener(emitter, { concurrency: 1 });
    await store.appendEvents(batch(emitter, [{ warm: true }]));
    const claim = { claimer: "me", leaseMs: 30_000 };
    const [warm] = await store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 10 }).then((all) => all.filter((one) => one.listenerId === workflow.id));
    expect(warm?.event).toEqual({ warm: true });
    const before = { ...messages };
    // The warm-up run still holds the slot: these wait.
    const waiting = await store.appendEvents(batch(emitter, [{ n: 0 }, { n: 1 }], { claim }));
    expect(messages.sent - before.sent).toBe(2);
    expect(waiting.deliveries).toBe(0);
    expect(waiting.claimed).toEqual([]);
    const ended = (delivery: NonNullable<typeof warm>) => {
      const at = Date.now();
      return { id: newId("run", at), ownerId, workflowId: workflow.id, emitterId: delivery.emitterId, eventId: delivery.eventId, status: "success" as const, triggerEvent: delivery.event, steps: [], error: null, exitReason: null, replayOf: null, startedAt: at, finishedAt: at, durationMs: 0 };
    };
    let running = (await store.finishRuns({ runs: [ended(warm!)], deliveries: [warm!], appends: [], admitClaim: claim })).admitted?.[0];
    expect(running?.event).toEqual({ n: 0 });
    running = (await store.finishRuns({ runs: [ended(running!)], deliveries: [running!], appends: [], admitClaim: claim })).admitted?.[0];
    expect(running?.event).toEqual({ n: 1 });
    await store.finishRuns({ runs: [ended(running!)], deliveries: [running!], appends: [], admitClaim: claim });
    // An idle line: the next append is admitted at once, its row written by its join, claimed for the caller.
    const admitted = await store.appendEvents(batch(emitter, [{ n: 2 }], { claim }));
    expect(admitted.deliveries).toBe(1);
    expect(admitted.claimed?.map((one) => [one.event, one.status])).toEqual([[{ n: 2 }, "running"]]);
    expect((await rowsOf(emitter)).deliveries.map((row) => row.status)).toEqual(["running"]);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 0, inFlight: 1 });
    expect(messages.failed).toBe(before.failed);
  });

  it("leaves the append to the usual path, whole, when the gate changed between its two messages (its key, here)", async () => {
    const emitter = emitterId();
    const workflow = await listener(emitter, { concurrency: 1, concurrencyKey: "{{ steps.trigger.event.body.a }}" });
    await store.appendEvents(batch(emitter, [{ body: { a: "x", b: "y" } }]));
    // Another transaction holds the gate row: the second message waits for it, after its first read the gate.
    const holder = await pool.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM workflow_gates WHERE workflow_id = $1 FOR UPDATE", [workflow.id]);
    const before = { ...messages };
    const appending = store.appendEvents(batch(emitter, [{ body: { a: "x", b: "z" } }]));
    await waitFor(async () => (await pool.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%workflow_gates%FOR UPDATE%' AND pid <> pg_backend_pid()")).rowCount! > 0);
    await holder.query("UPDATE workflow_gates SET concurrency_key = $1 WHERE workflow_id = $2", ["{{ steps.trigger.event.body.b }}", workflow.id]);
    await holder.query("COMMIT");
    holder.release();
    const appended = await appending;
    // The second message failed its guard and was undone; the usual path joined the event on the new key's line.
    expect(messages.failed - before.failed).toBe(1);
    expect(appended.events).toHaveLength(1);
    const keys = await pool.query("SELECT gate_key, state FROM run_gate WHERE workflow_id = $1 ORDER BY position", [workflow.id]);
    expect(keys.rows).toEqual([
      { gate_key: JSON.stringify("x"), state: "admitted" },
      { gate_key: JSON.stringify("z"), state: "admitted" },
    ]);
    expect((await rowsOf(emitter)).events).toHaveLength(2);
  });

  it("leaves to the usual path what it does not take: log lines, a count not known", async () => {
    const emitter = emitterId();
    await listener(emitter);
    await store.appendEvents(batch(emitter, [{ n: 0 }]));
    const before = { ...messages };
    await store.appendEvents(batch(emitter, [{ n: 1 }], { logs: [{ stream: "stdout", text: "hello", ts: Date.now() }] }));
    expect(messages.sent).toBe(before.sent);
    // Counts forgotten (as a deletion by hand leaves them): the first message is sent, then rolled back.
    await pool.query("UPDATE emitter_state SET channel_counts = NULL WHERE emitter_id = $1", [emitter]);
    await store.appendEvents(batch(emitter, [{ n: 2 }]));
    expect(messages.sent - before.sent).toBe(2);
    expect(JSON.parse((await rowsOf(emitter)).state[0].channel_counts)).toEqual({ "": 3 });
    // Counted again by the usual path: the next goes in two messages, and writes.
    const again = { ...messages };
    await store.appendEvents(batch(emitter, [{ n: 3 }]));
    expect(messages.sent - again.sent).toBe(2);
    expect((await rowsOf(emitter)).events.map((row) => JSON.parse(row.event))).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
  });

  describe("statements kept prepared per connection", () => {
    it("mean what the same values sent as parameters mean", async () => {
      const client = await pool.connect();
      try {
        await fc.assert(
          fc.asyncProperty(parameterValues, async (one) => {
            const asParameter = (await client.query("SELECT $1::text AS v", [one])).rows[0].v;
            const text = await statementText(client, "SELECT $1::text AS v", [one], inlineParameters);
            expect(text).toMatch(/^EXECUTE runnel_\d+\(/);
            expect((await client.query(text)).rows[0].v).toBe(asParameter);
          }),
          { numRuns: 200 },
        );
      } finally {
        client.release();
      }
    });

    it("are prepared again after a table's columns changed under them, and a statement PostgreSQL will not prepare goes inline", async () => {
      const single = new pg.Pool({ connectionString: schema.databaseUrl, max: 1 });
      try {
        const send = oneTripOn(single);
        await single.query("CREATE TABLE prepared_probe (a integer)");
        await single.query("INSERT INTO prepared_probe VALUES (1)");
        expect(await send([{ sql: "SELECT * FROM prepared_probe WHERE a = $1", parameters: [1] }])).toEqual([[{ a: 1 }]]);
        await single.query("ALTER TABLE prepared_probe ADD COLUMN b integer");
        // The plan's result no longer fits: that message fails, and the connection's statements are dropped before its next.
        await expect(send([{ sql: "SELECT * FROM prepared_probe WHERE a = $1", parameters: [1] }])).rejects.toMatchObject({ code: "0A000" });
        expect(await send([{ sql: "SELECT * FROM prepared_probe WHERE a = $1", parameters: [1] }])).toEqual([[{ a: 1, b: null }]]);
        // No type for $1 anywhere: PostgreSQL will not prepare it; refused once (the caller goes the usual way), inline after.
        const client = await single.connect();
        try {
          await expect(statementText(client, "SELECT $1 IS NULL AS unknown_type", [null], inlineParameters)).rejects.toThrow(/would not prepare/);
          expect(await statementText(client, "SELECT $1 IS NULL AS unknown_type", [null], inlineParameters)).toBe("SELECT NULL IS NULL AS unknown_type");
        } finally {
          client.release();
        }
      } finally {
        await single.end();
      }
    });

    // Last: it turns preparing off for this file's process.
    it("are given up for good once a connection lacks one it prepared (a pooler in transaction mode): inline from then on", async () => {
      const single = new pg.Pool({ connectionString: schema.databaseUrl, max: 1 });
      try {
        const send = oneTripOn(single);
        expect(await send([{ sql: "SELECT $1::int + 1 AS n", parameters: [1] }])).toEqual([[{ n: 2 }]]);
        // What a pooler does to a session: the next transaction's server connection never saw the PREPARE.
        await single.query("DEALLOCATE ALL");
        await expect(send([{ sql: "SELECT $1::int + 1 AS n", parameters: [1] }])).rejects.toMatchObject({ code: "26000" });
        expect(await send([{ sql: "SELECT $1::int + 1 AS n", parameters: [2] }])).toEqual([[{ n: 3 }]]);
        const client = await single.connect();
        try {
          expect(await statementText(client, "SELECT $1::int + 1 AS n", [5], inlineParameters)).toBe("SELECT '5'::int + 1 AS n");
        } finally {
          client.release();
        }
      } finally {
        await single.end();
      }
    });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
