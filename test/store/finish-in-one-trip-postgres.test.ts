import fc from "fast-check";
import { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { Workflow, WorkflowRun } from "../../src/domain/workflows.js";
import { createKyselyStore } from "../../src/store/kysely/kysely-store.js";
import { CurrentSchemaPostgresDialect } from "../../src/store/postgres/current-schema-dialect.js";
import { inlineParameters, InlineRefused, literalOf, oneTripOn, tripSessionOn } from "../../src/store/postgres/one-trip.js";
import type { ClaimedDelivery, Store } from "../../src/store/store.js";
import { workflowFor } from "../helpers/workflow-rows.js";
import { countedTrips, migratedTestSchema } from "../helpers/postgres.js";
import { parameterValues } from "../helpers/sql-values.js";
import { newUserInput } from "./store-contract.js";

/**
 * finishRuns on PostgreSQL in one round trip (finish-in-one-trip.ts): its
 * statements go with their values written inline, which must mean exactly
 * what the same values sent as parameters mean, whatever they hold; the
 * batches it takes record and admit what the transaction would; and a gate
 * changed since its kind was learnt sends the batch the usual way, whole.
 */
describe("finishRuns in one round trip on PostgreSQL", () => {
  let schema: Awaited<ReturnType<typeof migratedTestSchema>>["schema"];
  let pool: pg.Pool;
  let store: Store;
  let trips: { sent: number; failed: number };
  let ownerId: string;
  const emitter = "dc_emitter0000000000000000000";

  beforeAll(async () => {
    ({ schema, pool } = await migratedTestSchema("runnel_one_trip"));
    // The store as createPostgresStore makes it, with its trips counted.
    const send = oneTripOn(pool);
    trips = { sent: 0, failed: 0 };
    const counted = countedTrips(send, trips);
    const db = new Kysely<any>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
    store = createKyselyStore({ kind: "postgres", db, isUniqueViolation: () => false, oneTrip: counted });
    ownerId = (await store.createUser(newUserInput())).id;
  });
  afterAll(async () => {
    await store?.close();
    await schema?.drop();
  });

  describe("values written inline", () => {
    it("mean what the same values sent as parameters mean: any text, JSON, numbers, booleans, bytes, null", async () => {
      await fc.assert(
        fc.asyncProperty(parameterValues, async (one) => {
          const asParameter = (await pool.query("SELECT $1::text AS v", [one])).rows[0].v;
          const inline = (await pool.query(inlineParameters("SELECT $1::text AS v", [one]))).rows[0].v;
          expect(inline).toBe(asParameter);
        }),
        { numRuns: 300 },
      );
      const bytes = Buffer.from([0, 1, 39, 92, 255]);
      expect((await pool.query(`SELECT ${literalOf(bytes)}::bytea AS v`)).rows[0].v).toEqual(bytes);
    });

    it("leaves placeholders inside quoted text and identifiers alone, and tells $1 from $10", async () => {
      const parameters = Array.from({ length: 10 }, (_, index) => `p${index + 1}`);
      const sql = `SELECT '$1 it''s' AS "$2 ""x""", $10::text AS ten, $1::text AS one`;
      expect(inlineParameters(sql, parameters)).toBe(`SELECT '$1 it''s' AS "$2 ""x""", 'p10'::text AS ten, 'p1'::text AS one`);
      const [row] = (await pool.query(inlineParameters(sql, parameters))).rows;
      expect(row).toEqual({ '$2 "x"': "$1 it's", ten: "p10", one: "p1" });
    });

    it("refuses what it cannot write: a NUL character, a date, an array or a toPostgres object, a missing parameter, an open quote", () => {
      expect(() => literalOf("a\0b")).toThrow(InlineRefused);
      expect(() => literalOf(new Date())).toThrow(InlineRefused);
      expect(() => literalOf([1, 2])).toThrow(InlineRefused);
      expect(() => literalOf({ toPostgres: () => "x" })).toThrow(InlineRefused);
      expect(() => inlineParameters("SELECT $2", ["only one"])).toThrow(InlineRefused);
      expect(() => inlineParameters("SELECT 'open", [])).toThrow(InlineRefused);
    });

    it("runs several statements as one transaction: a failing one undoes those before it", async () => {
      await pool.query("CREATE TABLE IF NOT EXISTS one_trip_probe (n integer)");
      const send = oneTripOn(pool);
      const answers = await send([
        { sql: "INSERT INTO one_trip_probe (n) VALUES ($1) RETURNING n", parameters: [1] },
        { sql: "SELECT COUNT(*)::int AS c FROM one_trip_probe", parameters: [] },
      ]);
      // The second statement saw the first's row: one transaction, a snapshot per statement.
      expect(answers).toEqual([[{ n: 1 }], [{ c: 1 }]]);
      await expect(send([{ sql: "INSERT INTO one_trip_probe (n) VALUES ($1)", parameters: [2] }, { sql: "SELECT CAST($1 AS integer)", parameters: ["not a number"] }])).rejects.toThrow(/not a number/);
      expect((await pool.query("SELECT n FROM one_trip_probe ORDER BY n")).rows).toEqual([{ n: 1 }]);
    });
  });

  async function gated(settings: Partial<Workflow["settings"]>): Promise<Workflow> {
    const workflow = await store.createWorkflow(workflowFor(ownerId, `line-${Math.random().toString(36).slice(2, 8)}`, { settings: { errorNotifications: true, errorRetention: 100, ...settings } }));
    await store.subscribe({ id: newId("subscription"), ownerId, emitterId: emitter, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
    return workflow;
  }

  const append = (events: unknown[]) => store.appendEvents({ ownerId, emitterId: emitter, emits: events.map((event) => ({ event })), dedupe: null, retention: 1000, now: Date.now() });

  function ended(workflow: Workflow, delivery: ClaimedDelivery): WorkflowRun {
    const at = Date.now();
    return { id: newId("run", at), ownerId, workflowId: workflow.id, emitterId: delivery.emitterId, eventId: delivery.eventId, status: "success", triggerEvent: delivery.event, steps: [], error: null, exitReason: null, replayOf: null, startedAt: at, finishedAt: at, durationMs: 0 };
  }

  const claimFor = (workflow: Workflow) => store.claimDeliveries({ now: Date.now(), leaseMs: 30_000, limit: 100 }).then((claimed) => claimed.filter((one) => one.listenerId === workflow.id));

  it("records a line's runs and admits the next in one trip once the gate's kind is known, in arrival order", async () => {
    const workflow = await gated({ concurrency: 2 });
    await append([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const running = await claimFor(workflow);
    expect(running.map((one) => one.event)).toEqual([{ n: 0 }, { n: 1 }]);
    const before = { ...trips };
    const order: unknown[] = [];
    while (running.length > 0) {
      const done = running.shift()!;
      order.push(done.event);
      const finished = await store.finishRuns({ runs: [ended(workflow, done)], deliveries: [done], appends: [], admitClaim: { claimer: "me", leaseMs: 30_000 } });
      expect(finished.recorded.size).toBe(1);
      for (const next of finished.admitted ?? []) {
        expect(next).toMatchObject({ status: "running" });
        // A line of two slots takes no followers: only a one-at-a-time line's records are chains.
        expect(next.followers).toBeUndefined();
        running.push(next);
      }
    }
    expect(order).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    // The first batch learnt the gate the usual way; the four after it went in one trip each.
    expect(trips.sent - before.sent).toBe(4);
    expect(trips.failed).toBe(before.failed);
    // Nothing left behind: the runs' delivery rows dropped, the line empty, every run recorded once.
    expect(await claimFor(workflow)).toEqual([]);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 0, inFlight: 0 });
    expect((await store.listRuns(ownerId, workflow.id, { limit: 10 })).items).toHaveLength(5);
  });

  it("records a one-at-a-time line's runs the usual way: each admission takes the next waiting events as its followers", async () => {
    const workflow = await gated({ concurrency: 1 });
    await append([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
    const [first] = await claimFor(workflow);
    const before = { ...trips };
    const learnt = await store.finishRuns({ runs: [ended(workflow, first!)], deliveries: [first!], appends: [], admitClaim: { claimer: "me", leaseMs: 30_000 } });
    const head = learnt.admitted![0]!;
    expect(head.followers?.map((one) => one.event)).toEqual([{ n: 2 }, { n: 3 }]);
    const chained = await store.finishRuns({
      runs: [head, ...head.followers!].map((one) => ended(workflow, one)),
      deliveries: [head],
      appends: [],
      admitClaim: { claimer: "me", leaseMs: 30_000 },
      chains: [{ workflowId: workflow.id, headEventId: head.eventId, gateKey: head.lineKey! }],
    });
    expect(chained.recorded.size).toBe(3);
    expect(chained.admitted ?? []).toEqual([]);
    // Neither went in one trip (taking followers needs the admission's answer).
    expect(trips.sent).toBe(before.sent);
    expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 0, inFlight: 0 });
    expect((await store.listRuns(ownerId, workflow.id, { limit: 10 })).items).toHaveLength(4);
  });

  it("sends the batch the usual way, whole, when the gate changed since its kind was learnt (here: a rate limit added)", async () => {
    const workflow = await gated({ concurrency: 2 });
    await append([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
    const [first, running] = await claimFor(workflow);
    // The kind is learnt ("a line"), and the next is admitted.
    const admitted = (await store.finishRuns({ runs: [ended(workflow, first!)], deliveries: [first!], appends: [], admitClaim: { claimer: "me", leaseMs: 30_000 } })).admitted ?? [];
    expect(admitted.map((one) => one.event)).toEqual([{ n: 2 }]);
    await store.updateWorkflow({ ...(await store.findWorkflow(ownerId, workflow.id))!, settings: { ...workflow.settings, concurrency: 2, rateLimit: { runs: 100, perSeconds: 1 } } });
    const before = { ...trips };
    const finished = await store.finishRuns({ runs: [ended(workflow, running!)], deliveries: [running!], appends: [], admitClaim: { claimer: "me", leaseMs: 30_000 } });
    // The trip was sent and undone by its guard; the usual way then freed the slot and admitted the next under the rate limit.
    expect(trips.sent - before.sent).toBe(1);
    expect(trips.failed - before.failed).toBe(1);
    expect(finished.recorded.size).toBe(1);
    expect(finished.admitted?.map((one) => one.event)).toEqual([{ n: 3 }]);
    expect((await store.listRuns(ownerId, workflow.id, { limit: 10 })).items).toHaveLength(2);
  });

  it("sends the batch the usual way when a workflow learnt to have no gate has one now", async () => {
    const workflow = await store.createWorkflow(workflowFor(ownerId, `free-${Math.random().toString(36).slice(2, 8)}`, { settings: { errorNotifications: true, errorRetention: 100 } }));
    await store.subscribe({ id: newId("subscription"), ownerId, emitterId: emitter, listenerId: workflow.id, eventName: "", createdAt: Date.now() });
    await append([{ n: 0 }, { n: 1 }]);
    const [first, second] = await claimFor(workflow);
    await store.finishRuns({ runs: [ended(workflow, first!)], deliveries: [first!], appends: [] });
    // A concurrency set since (by another process, say): the gate row exists now, and the run that held a slot before it does not hold one.
    await store.updateWorkflow({ ...(await store.findWorkflow(ownerId, workflow.id))!, settings: { ...workflow.settings, concurrency: 2 } });
    const before = { ...trips };
    const finished = await store.finishRuns({ runs: [ended(workflow, second!)], deliveries: [second!], appends: [] });
    expect(trips.failed - before.failed).toBe(1);
    expect(finished.recorded.size).toBe(1);
    expect((await store.listRuns(ownerId, workflow.id, { limit: 10 })).items).toHaveLength(2);
    // And the batch after that learnt "a line", and goes in one trip again.
    await append([{ n: 2 }]);
    const [third] = await claimFor(workflow);
    const again = { ...trips };
    await store.finishRuns({ runs: [ended(workflow, third!)], deliveries: [third!], appends: [] });
    expect(trips.sent - again.sent).toBe(1);
    expect(trips.failed).toBe(again.failed);
  });

  describe("admissions handed over before the commit (FinishRunsInput.onAdmitted)", () => {
    let early: Store;
    beforeAll(() => {
      const db = new Kysely<any>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
      early = createKyselyStore({ kind: "postgres", db, isUniqueViolation: () => false, oneTrip: oneTripOn(pool), tripSession: tripSessionOn(pool) });
    });
    const claim = { claimer: "me", leaseMs: 30_000 };

    /**
     * A line of two slots (a one-at-a-time line's records take followers, the usual way) and four events: the
     * first recorded (its kind learnt, the usual way), which admitted the third; the second runs, the fourth waits.
     */
    async function line() {
      const workflow = await gated({ concurrency: 2 });
      await append(Array.from({ length: 4 }, (_, n) => ({ n })));
      const [first, running] = await claimFor(workflow);
      const admitted = (await early.finishRuns({ runs: [ended(workflow, first!)], deliveries: [first!], appends: [], admitClaim: claim })).admitted ?? [];
      expect(admitted.map((one) => one.event)).toEqual([{ n: 2 }]);
      return { workflow, running: running! };
    }

    it("hands the next over before its record commits, with that commit; the record is there once finishRuns resolves", async () => {
      const { workflow, running } = await line();
      let handed: ClaimedDelivery[] = [];
      let resolved = false;
      let handedBeforeResolved: boolean | undefined;
      const recording = early.finishRuns({
        runs: [ended(workflow, running)],
        deliveries: [running],
        appends: [],
        admitClaim: claim,
        onAdmitted: (admitted) => {
          handed = admitted;
          handedBeforeResolved = !resolved;
          return true;
        },
      });
      void recording.then(() => (resolved = true));
      const finished = await recording;
      expect(handedBeforeResolved).toBe(true);
      expect(handed.map((one) => one.event)).toEqual([{ n: 3 }]);
      expect(handed[0]!.admission).toBeInstanceOf(Promise);
      await expect(handed[0]!.admission).resolves.toBeUndefined();
      // Taken: not answered again in `admitted`.
      expect(finished.admitted ?? []).toEqual([]);
      expect(finished.recorded.size).toBe(1);
      expect((await store.listRuns(ownerId, workflow.id, { limit: 10 })).items).toHaveLength(2);
      // The handed-over delivery's row is there, claimed; the next run's record frees the line.
      const next = await early.finishRuns({ runs: [ended(workflow, handed[0]!)], deliveries: [handed[0]!], appends: [], admitClaim: claim, onAdmitted: () => true });
      expect(next.recorded.size).toBe(1);
      // The third still holds its slot.
      expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 0, inFlight: 1 });
    });

    it("answers them in `admitted` after the commit when the taker declines them", async () => {
      const { workflow, running } = await line();
      const finished = await early.finishRuns({ runs: [ended(workflow, running)], deliveries: [running], appends: [], admitClaim: claim, onAdmitted: () => false });
      expect(finished.admitted?.map((one) => one.event)).toEqual([{ n: 3 }]);
      expect(finished.admitted?.[0]?.admission).toBeUndefined();
    });

    it("fails the admission with its commit: nothing recorded, nothing admitted, the line as it was", async () => {
      const { workflow, running } = await line();
      // A check PostgreSQL makes only at commit (a deferred constraint trigger): the second message fails, the first did not.
      await pool.query(`CREATE OR REPLACE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.workflow_id = '${workflow.id}' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NEW; END $$`);
      await pool.query("CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()");
      try {
        let handed: ClaimedDelivery[] = [];
        const recording = early.finishRuns({ runs: [ended(workflow, running)], deliveries: [running], appends: [], admitClaim: claim, onAdmitted: (admitted) => ((handed = admitted), true) });
        await expect(recording).rejects.toThrow(/refused at commit/);
        expect(handed.map((one) => one.event)).toEqual([{ n: 3 }]);
        await expect(handed[0]!.admission).rejects.toThrow(/refused at commit/);
      } finally {
        await pool.query("DROP TRIGGER refuse_at_commit ON runs");
      }
      // Undone whole: one run recorded (the first), the running one and the third still hold their slots, the fourth waits.
      expect((await store.listRuns(ownerId, workflow.id, { limit: 10 })).items).toHaveLength(1);
      expect(await store.gateStats(ownerId, workflow.id, Date.now())).toMatchObject({ waiting: 1, inFlight: 2 });
      const again = await early.finishRuns({ runs: [ended(workflow, running)], deliveries: [running], appends: [], admitClaim: claim, onAdmitted: () => false });
      expect(again.admitted?.map((one) => one.event)).toEqual([{ n: 3 }]);
    });
  });
});
