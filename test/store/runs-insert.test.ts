import fc from "fast-check";
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely";
import { describe, expect, it } from "vitest";
import type { WorkflowRun } from "../../src/domain/workflows.js";
import type { Database } from "../../src/store/kysely/schema.js";
import { runsInsert, runsInsertStatement } from "../../src/store/kysely/runs-insert.js";

/**
 * The runs' statement of finishRuns on PostgreSQL, its text kept per shape
 * and its values laid out by hand (runs-insert.ts): for any runs, delivery
 * keys and gates, the same SQL and the same values, in the same order, as
 * Kysely compiles from the query it builds, the first time a shape is seen
 * and every time after.
 */
describe("the runs' statement, compiled once per shape", () => {
  // Compiling needs no connection.
  const db = new Kysely<Database>({
    dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (kysely) => new PostgresIntrospector(kysely), createQueryCompiler: () => new PostgresQueryCompiler() },
  });

  const text = fc.string({ minLength: 1, maxLength: 12 });
  const run: fc.Arbitrary<WorkflowRun> = fc.record(
    {
      id: text,
      ownerId: text,
      workflowId: fc.constantFrom("p_a", "p_b", "p_c"),
      emitterId: text,
      eventId: text,
      status: fc.constantFrom("success", "error", "retrying", "delayed", "cancelled", "exited"),
      triggerEvent: fc.jsonValue(),
      steps: fc.constant([]),
      error: fc.option(fc.record({ code: text, name: text, message: text }), { nil: null }),
      exitReason: fc.option(text, { nil: null }),
      replayOf: fc.option(text, { nil: null }),
      startedAt: fc.nat(),
      finishedAt: fc.nat(),
      durationMs: fc.nat(),
      attempt: fc.integer({ min: 1, max: 5 }),
      nextAttemptAt: fc.option(fc.nat(), { nil: null }),
      workflowVersion: fc.option(fc.integer({ min: 1, max: 9 }), { nil: null }),
    },
    // Some fields left out altogether, as runs recorded without retries are.
    { requiredKeys: ["id", "ownerId", "workflowId", "emitterId", "eventId", "status", "triggerEvent", "steps", "error", "exitReason", "replayOf", "startedAt", "finishedAt", "durationMs"] },
  ) as fc.Arbitrary<WorkflowRun>;
  const key = fc.record({ listenerId: text, emitterId: text, eventId: text });
  const input = fc.record({ runs: fc.array(run, { minLength: 1, maxLength: 3 }), removed: fc.array(key, { maxLength: 3 }), gateIds: fc.uniqueArray(fc.constantFrom("p_a", "p_b", "p_c"), { maxLength: 2 }) });

  it("writes exactly what Kysely compiles, for any input, whether its shape was seen before or not", () => {
    fc.assert(
      fc.property(fc.array(input, { minLength: 1, maxLength: 6 }), (inputs) => {
        for (const { runs, removed, gateIds } of inputs) {
          const expected = runsInsert(db, runs, removed, gateIds).compile();
          const statement = runsInsertStatement(db, runs, removed, gateIds);
          expect(statement.sql).toBe(expected.sql);
          expect(statement.parameters).toEqual(expected.parameters);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("compiles afresh a run with a value left undefined (its columns differ), and gets it right", () => {
    const base: Omit<WorkflowRun, "exitReason"> = { id: "run_1", ownerId: "u", workflowId: "p_a", emitterId: "e", eventId: "1-0", status: "success", triggerEvent: {}, steps: [], error: null, replayOf: null, startedAt: 1, finishedAt: 2, durationMs: 1 };
    // Seen complete first: the shape's text is kept.
    runsInsertStatement(db, [{ ...base, exitReason: null }], [], []);
    const partial = { ...base, exitReason: undefined } as unknown as WorkflowRun;
    const expected = runsInsert(db, [partial], [], []).compile();
    expect(runsInsertStatement(db, [partial], [], [])).toEqual({ sql: expected.sql, parameters: expected.parameters });
  });
});
