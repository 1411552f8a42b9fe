import { describe, expect, it } from "vitest";
import { RUN_TRIM_EVERY, type WorkflowRun } from "../domain/workflows.js";
import { RunTrimSchedule, staleAppend } from "./run-plan.js";
import type { EventBatch } from "./store.js";

const run = (id: string, workflowId = "p_1") => ({ id, workflowId }) as WorkflowRun;
const batch = (runId?: string) => ({ runId }) as EventBatch;

describe("staleAppend", () => {
  it.each([
    ["a recorded run's append", batch("run_a"), [run("run_a")], ["run_a"], false],
    ["the append of a run recorded before (not now)", batch("run_a"), [run("run_a")], [], true],
    ["an append of no run", batch(), [run("run_a")], [], false],
    ["an append of a run not in the batch", batch("run_b"), [run("run_a")], [], false],
  ] as const)("%s", (_what, appended, runs, recorded, stale) => {
    expect(staleAppend(appended, [...runs], new Set(recorded))).toBe(stale);
  });
});

describe("RunTrimSchedule", () => {
  it("says a workflow's trim is due once every RUN_TRIM_EVERY runs, counting each workflow apart", () => {
    const schedule = new RunTrimSchedule();
    const many = (count: number, workflowId: string) => Array.from({ length: count }, (_, i) => run(`run_${i}`, workflowId));
    expect(schedule.due(many(RUN_TRIM_EVERY - 1, "p_1"))).toEqual([]);
    expect(schedule.due([...many(1, "p_1"), ...many(1, "p_2")])).toEqual(["p_1"]);
    expect(schedule.due(many(RUN_TRIM_EVERY - 1, "p_1"))).toEqual([]);
    expect(schedule.due(many(RUN_TRIM_EVERY - 1, "p_2"))).toEqual(["p_2"]);
  });
});
