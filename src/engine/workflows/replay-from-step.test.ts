import { describe, expect, it } from "vitest";
import { ConflictError } from "../../domain/errors.js";
import type { StoredEvent } from "../../domain/sources.js";
import type { WorkflowVersion } from "../../domain/workflow-versions.js";
import type { StepRecord, Workflow, WorkflowRun } from "../../domain/workflows.js";
import type { Store } from "../../store/store.js";
import { planReplay, readReplayChoice } from "./replay-from-step.js";

/**
 * Why a replay cannot start at the failed step (or run the failed run's
 * code), decided before anything is queued. The cases the end-to-end tests
 * (test/workflows/replay-from-step.test.ts) cannot reach through the API
 * without a thousand runs or an old database: a run gone with retention,
 * one recorded before versions or before failed runs kept their sends.
 */

const NOW = 1_700_000_000_000;
const step = (id: string, name: string) => ({ id, name, componentId: `sc_${id}`, key: null, props: {} });
const workflow: Workflow = {
  id: "p_1",
  ownerId: "u_1",
  name: "W",
  nameSlug: "w",
  active: true,
  triggerSourceId: null,
  triggerOwned: false,
  triggerKind: "none",
  steps: [step("c_1", "first"), step("c_2", "broken")],
  respond: "immediately",
  settings: { errorNotifications: true, errorRetention: 100 },
  isErrorWorkflow: false,
  deploymentId: "d_2",
  createdAt: NOW,
  updatedAt: NOW,
  version: 2,
};
const record = (id: string, name: string, status: StepRecord["status"], sends: StepRecord["sends"] = []): StepRecord => ({ id, name, status, returnValue: null, exports: {}, summary: null, logs: [], startedAt: NOW, durationMs: 1, sends });
const failedRun: WorkflowRun = {
  id: "run_1",
  ownerId: "u_1",
  workflowId: "p_1",
  emitterId: "p_1",
  eventId: "1-0",
  status: "error",
  triggerEvent: {},
  steps: [record("c_1", "first", "success"), record("c_2", "broken", "error")],
  error: { code: "UserError", msg: "broken", name: "Error", cellId: "c_2", ts: "", stack: "" },
  exitReason: null,
  replayOf: null,
  startedAt: NOW,
  finishedAt: NOW,
  durationMs: 1,
  workflowVersion: 1,
};
const error: StoredEvent = { id: "2-0", emitterId: "p_1", channel: "$errors", summary: null, emitId: "run_1", event: {}, indexedAtMs: NOW };

function storeWith(run: WorkflowRun | null, versions: WorkflowVersion[] = []): Store {
  return {
    findRun: async () => run,
    findWorkflowVersion: async (_owner: string, _workflow: string, version: number) => versions.find((candidate) => candidate.version === version) ?? null,
  } as unknown as Store;
}

const fromStep = { from: "failed_step", withCode: "current" } as const;

describe("planReplay", () => {
  it("needs nothing for today's replay (from the trigger, current code), not even the run", async () => {
    expect(await planReplay(storeWith(null), workflow, error, { from: "trigger", withCode: "current" })).toEqual({});
  });

  it("copies the records and sends of the steps before the failed one", async () => {
    const sent = record("c_1", "first", "success", [{ destination: "http", target: "POST https://x.test/", summary: "", status: "not_sent", detail: null }]);
    const run = { ...failedRun, steps: [sent, failedRun.steps[1]!], continuation: { sends: [{ type: "http", payload: { url: "https://x.test/" } }], sendPlaces: [{ step: 0, send: 0 }], tries: {} } };
    expect(await planReplay(storeWith(run), workflow, error, fromStep)).toEqual({
      resume: { run_id: "run_1", step_id: "c_2", steps: [sent], sends: run.continuation.sends, send_places: run.continuation.sendPlaces },
    });
  });

  it("refuses (409) a run gone with retention, a run still retrying, one that ended well, and a failure before any step", async () => {
    await expect(planReplay(storeWith(null), workflow, error, fromStep)).rejects.toThrow(/is no longer kept \(a workflow keeps its last 1,000 runs\).*"from": "trigger"/);
    await expect(planReplay(storeWith({ ...failedRun, status: "retrying", nextAttemptAt: NOW }), workflow, error, fromStep)).rejects.toThrow(/is still retrying its failed step \(next attempt at 2023-11-14T22:13:20.000Z\)/);
    await expect(planReplay(storeWith({ ...failedRun, status: "success" }), workflow, error, fromStep)).rejects.toThrow(/ended well on a later attempt/);
    const inTrigger = { ...failedRun, error: { ...failedRun.error!, cellId: "c_trigger" } };
    await expect(planReplay(storeWith(inTrigger), workflow, error, fromStep)).rejects.toThrow(/did not happen in a step of the workflow/);
    await expect(planReplay(storeWith(null), workflow, error, fromStep)).rejects.toBeInstanceOf(ConflictError);
  });

  it("finds the run of a failed $.send's error (DestinationFailed, emitted as <run id>:<step>:<send>) and says no step failed", async () => {
    const sendError: StoredEvent = { ...error, emitId: "run_1:0:0", event: { error: { code: "DestinationFailed" } } };
    let asked = "";
    const store = { findRun: async (_owner: string, runId: string) => ((asked = runId), { ...failedRun, status: "success" as const }) } as unknown as Store;
    await expect(planReplay(store, workflow, sendError, fromStep)).rejects.toThrow(/is a \$\.send that failed after its run ended well \(DestinationFailed\)/);
    expect(asked).toBe("run_1");
  });

  it("refuses a run whose earlier steps sent something it did not keep (recorded before failed runs kept their sends)", async () => {
    const sent = record("c_1", "first", "success", [{ destination: "emit", target: "", summary: "", status: "not_sent", detail: null }]);
    await expect(planReplay(storeWith({ ...failedRun, steps: [sent, failedRun.steps[1]!] }), workflow, error, fromStep)).rejects.toThrow(/before failed runs kept what their steps sent/);
  });

  it("runs the failed run's version when asked, and refuses when it is not known or no longer kept", async () => {
    const version1: WorkflowVersion = { workflowId: "p_1", ownerId: "u_1", version: 1, deploymentId: "d_1", steps: [step("c_1", "first"), step("c_2", "broken")], savedAt: NOW };
    expect(await planReplay(storeWith(failedRun, [version1]), workflow, error, { from: "failed_step", withCode: "failed_run" })).toMatchObject({ version: 1, resume: { step_id: "c_2" } });
    expect(await planReplay(storeWith(failedRun, [version1]), workflow, error, { from: "trigger", withCode: "failed_run" })).toEqual({ version: 1 });
    // The failed run ran the current version: nothing to ask for.
    expect(await planReplay(storeWith({ ...failedRun, workflowVersion: 2 }), workflow, error, { from: "trigger", withCode: "failed_run" })).toEqual({});
    await expect(planReplay(storeWith(failedRun), workflow, error, { from: "failed_step", withCode: "failed_run" })).rejects.toThrow(/Version 1 of the workflow.*is no longer kept/);
    const { workflowVersion: _unknown, ...old } = failedRun;
    await expect(planReplay(storeWith(old), workflow, error, { from: "failed_step", withCode: "failed_run" })).rejects.toThrow(/recorded before workflow versions were kept/);
  });
});

describe("readReplayChoice", () => {
  it("defaults to today's replay and names the field it refuses", () => {
    expect(readReplayChoice({})).toEqual({ from: "trigger", withCode: "current" });
    expect(readReplayChoice({ from: "failed_step", with_code: "failed_run" })).toEqual({ from: "failed_step", withCode: "failed_run" });
    expect(() => readReplayChoice({ from: 3 })).toThrow(/from must be "trigger".*got 3/);
    expect(() => readReplayChoice({ with_code: "old" })).toThrow(/with_code must be "current"/);
  });
});
