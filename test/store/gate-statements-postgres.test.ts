import fc from "fast-check";
import { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { CurrentSchemaPostgresDialect } from "../../src/store/postgres/current-schema-dialect.js";
import { runGateWork } from "../../src/store/run-gate-drivers.js";
import { claimAdmitted, gateAppendRows, gateFinishedRuns, syncWorkflowGate, type AdmittedWrites, type DeliveryRowPlan, type GateDialect } from "../../src/store/run-gate-work.js";
import type { Store } from "../../src/store/store.js";
import { createTestSchema } from "../helpers/postgres.js";
import { newUserInput } from "./store-contract.js";

/**
 * On PostgreSQL the gate joins a line and frees a slot in one statement each
 * (data-modifying CTEs, run-gate-work.ts: joinLine, freeAndAdmitNext), where
 * SQLite takes them step by step. The stepwise SQL runs on PostgreSQL too: the
 * same random histories of arrivals and ended runs, on two workflows with the
 * same gate, one each way, must admit the same events in the same order,
 * leave the same lines, and leave the same delivery rows for what they
 * admitted (the CTE writes them itself, claimed or pending: AdmittedWrites).
 */
describe("the run gate's one-statement steps on PostgreSQL, against the stepwise ones", () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let store: Store;
  let db: Kysely<any>;
  let ownerId: string;
  const emitter = "dc_emitter0000000000000000000";

  beforeAll(async () => {
    schema = await createTestSchema("runnel_gate_statements");
    store = createPostgresStore({ connectionString: schema.databaseUrl, schema: schema.schema, maxConnections: 2 });
    await store.migrate();
    ownerId = (await store.createUser(newUserInput())).id;
    db = new Kysely<any>({ dialect: new CurrentSchemaPostgresDialect({ pool: new pg.Pool({ connectionString: schema.databaseUrl, max: 2 }) }) });
  });
  afterAll(async () => {
    await db?.destroy();
    await store?.close();
    await schema?.drop();
  });

  type Step = { kind: "arrive"; customer: "a" | "b" | null } | { kind: "end"; pick: number; claimFor: boolean };
  const steps = fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant("arrive" as const), customer: fc.constantFrom("a" as const, "b" as const, null) }),
      fc.record({ kind: fc.constant("end" as const), pick: fc.nat(5), claimFor: fc.boolean() }),
    ),
    { minLength: 1, maxLength: 30 },
  );

  it("admits the same events, in the same order, and leaves the same lines", async () => {
    let histories = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.boolean(), steps, async (concurrency, keyed, history) => {
        histories += 1;
        const gate = { concurrency, concurrencyKey: keyed ? "{{ steps.trigger.event.customer }}" : null, rateLimit: null };
        const lines = { postgres: `p_cte${histories}`, sqlite: `p_step${histories}` } satisfies Record<GateDialect, string>;
        for (const id of Object.values(lines)) await db.transaction().execute((trx) => runGateWork(trx, syncWorkflowGate({ id, ownerId }, gate, Date.now())));
        let arrivals = 0;
        for (const step of history) {
          const outcomes: Record<string, unknown> = {};
          if (step.kind === "arrive") {
            arrivals += 1;
            const eventId = `${1_000 + arrivals}-0`;
            // The same arrival on both lines: the same times and subscription, so that their delivery rows compare.
            const arrival = { at: Date.now(), subscriptionId: newId("subscription") };
            for (const [dialect, workflowId] of Object.entries(lines) as Array<[GateDialect, string]>) {
              const row = rowOf(workflowId, eventId, { customer: step.customer ?? undefined, n: arrivals }, arrival);
              const gated = await db.transaction().execute((trx) => runGateWork(trx, gateAppendRows([row], new Set([workflowId]), Date.now(), dialect)));
              outcomes[dialect] = { due: gated.due.map((due) => due.event_id), waiting: gated.waiting };
            }
          } else {
            const admitted = await lineOf(lines.postgres, "admitted");
            if (admitted.length === 0) continue;
            const ending = admitted[step.pick % admitted.length]!;
            // The CTE writes the admitted rows itself (claimed for the worker in hand, or pending), as finishRuns asks;
            // the stepwise way answers them and finishRuns writes them. The rows written must be the same.
            const claim = step.claimFor ? { claimer: "instance-1", leaseMs: 30_000 } : undefined;
            const now = Date.now();
            for (const [dialect, workflowId] of Object.entries(lines) as Array<[GateDialect, string]>) {
              const run = { workflowId, emitterId: emitter, eventId: ending.event_id, status: "success" };
              const writes: AdmittedWrites = { claim, written: new Map() };
              const next = await db.transaction().execute(async (trx) => {
                const rows = await runGateWork(trx, gateFinishedRuns([run], now, dialect, dialect === "postgres" ? writes : undefined));
                const toWrite = rows.filter((row) => !writes.written.has(row));
                claimAdmitted(toWrite, claim, now);
                if (toWrite.length > 0) await trx.insertInto("deliveries").values(toWrite).execute();
                return rows;
              });
              if (dialect === "postgres") expect(writes.written.size).toBe(next.length);
              outcomes[dialect] = {
                answered: next.map((row) => ({ event: row.event_id, payload: row.payload, status: row.status, claimedBy: row.claimed_by, availableAt: row.available_at })),
                written: (await deliveriesOf(workflowId)).map(({ listener_id: _listener, ...row }) => row),
              };
            }
          }
          expect(outcomes.postgres).toEqual(outcomes.sqlite);
          expect(await lineOf(lines.postgres)).toEqual(await lineOf(lines.sqlite));
        }
        // Never more admitted in a line than the concurrency.
        const held = await lineOf(lines.postgres, "admitted");
        for (const key of new Set(held.map((row) => row.gate_key))) expect(held.filter((row) => row.gate_key === key).length).toBeLessThanOrEqual(concurrency);
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  async function deliveriesOf(workflowId: string): Promise<Array<Record<string, unknown>>> {
    return db.selectFrom("deliveries").selectAll().where("listener_id", "=", workflowId).orderBy("event_id").execute();
  }

  async function lineOf(workflowId: string, state?: "admitted" | "waiting"): Promise<Array<{ event_id: string; gate_key: string; state: string; position: string }>> {
    let query = db.selectFrom("run_gate").select(["event_id", "gate_key", "state", "position"]).where("workflow_id", "=", workflowId);
    if (state) query = query.where("state", "=", state);
    return query.orderBy("position").execute();
  }

  function rowOf(workflowId: string, eventId: string, event: unknown, arrival: { at: number; subscriptionId: string }): DeliveryRowPlan {
    const now = arrival.at;
    return {
      listener_id: workflowId,
      emitter_id: emitter,
      event_id: eventId,
      owner_id: ownerId,
      subscription_id: arrival.subscriptionId,
      channel: "",
      status: "pending",
      attempts: 0,
      interruptions: 0,
      claimed_by: null,
      available_at: now,
      created_at: now,
      payload: JSON.stringify(event),
      indexed_at_ms: now,
    } as DeliveryRowPlan;
  }
});
