import { describe, expect, it } from "vitest";
import type { Workflow, WorkflowRun } from "../../domain/workflows.js";
import type { ClaimedDelivery } from "../../store/store.js";
import { applyFlowRequest, contextRunOf, newFlowToken } from "./run-flow.js";
import { finishedRun, resumeRun, startRun } from "./run-state.js";

/** A fake clock: due times are exact. */
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
  steps: [step("c_1", "one"), step("c_2", "poll"), step("c_3", "three")],
  respond: "immediately",
  settings: { errorNotifications: true, errorRetention: 100 },
  isErrorWorkflow: false,
  deploymentId: "d_1",
  createdAt: NOW,
  updatedAt: NOW,
};
const delivery: ClaimedDelivery = { listenerId: "p_1", emitterId: "p_1", eventId: "1-0", ownerId: "u_1", subscriptionId: "s", channel: "$run", status: "running", attempts: 1, interruptions: 0, availableAt: NOW, createdAt: NOW, event: {}, indexedAtMs: NOW };
const record = (id: string, name: string, sends = 0) => ({ id, name, status: "success" as const, returnValue: name, exports: {}, summary: null, logs: [], startedAt: NOW, durationMs: 1, sends: Array.from({ length: sends }, () => ({ destination: "http" as const, target: "POST x", summary: "", status: "pending" as const, detail: null })) });

/** The run as an execution of steps `one` and `poll` left it after `poll` asked for a rerun, recorded and read back. */
function rerunRecorded(runs: number): WorkflowRun {
  const run = startRun(workflow, { ...delivery }, "other", NOW);
  run.records.push(record("c_1", "one", 1), record("c_2", "poll", 1));
  run.sends = [{ type: "http", payload: { from: "one" } }, { type: "http", payload: { from: "poll" } }];
  run.sendPlaces = [{ step: 0, send: 0 }, { step: 1, send: 0 }];
  if (runs > 1) run.flow = { resumeAt: 1, token: "tok", rerun: { runs: runs - 1, context: null, maxReruns: 3 } };
  applyFlowRequest(run, workflow.steps[1]!, 1, { kind: "rerun", ms: 500, context: { polls: runs }, maxReruns: 3 }, NOW);
  return finishedRun(workflow, run, NOW);
}

describe("$.flow on the host", () => {
  it("a rerun makes the run delayed, due after the wait; resumed, the step sees one more execution and the context, its last sends dropped", () => {
    const waiting = rerunRecorded(1);
    expect(waiting).toMatchObject({ status: "delayed", nextAttemptAt: NOW + 500 });
    expect(waiting.continuation?.flow).toMatchObject({ resumeAt: 1, rerun: { runs: 1, context: { polls: 1 }, maxReruns: 3 } });
    const resumed = startRun(workflow, { ...delivery, attempts: 2 }, "other", NOW + 500);
    resumeRun(resumed, waiting, workflow.steps);
    expect(resumed.id).toBe(waiting.id);
    expect(resumed.resumeAt).toBe(1);
    expect(resumed.records.map((kept) => kept.name)).toEqual(["one"]);
    expect(resumed.scope.one).toEqual({ $return_value: "one" });
    expect(resumed.sends).toEqual([{ type: "http", payload: { from: "one" } }]);
    expect(contextRunOf(resumed, 1)).toEqual({ runs: 2, context: { polls: 1 } });
    expect(contextRunOf(resumed, 2)).toEqual({ runs: 1 });
  });

  it("fails the step past maxReruns, saying so", () => {
    expect(rerunRecorded(3).status).toBe("delayed");
    const failed = rerunRecorded(4);
    expect(failed.status).toBe("error");
    expect(failed.error?.msg).toContain('Step "poll" asked to rerun after 4 executions, past its limit of 3 reruns');
  });

  it("a delay resumes with the next step; a run that never waited keeps runs = its delivery's executions", () => {
    const run = startRun(workflow, { ...delivery, attempts: 2 }, "other", NOW);
    expect(contextRunOf(run, 0)).toEqual({ runs: 2 });
    run.records.push(record("c_1", "one"));
    applyFlowRequest(run, workflow.steps[0]!, 0, { kind: "delay", ms: 1_000 }, NOW);
    expect(run.flow).toEqual({ resumeAt: 1, token: run.flowToken });
    applyFlowRequest(startRun(workflow, { ...delivery }, "other", NOW), workflow.steps[0]!, 0, { kind: "delay", ms: Number.NaN }, NOW);
    const bad = startRun(workflow, { ...delivery }, "other", NOW);
    applyFlowRequest(bad, workflow.steps[0]!, 0, { kind: "delay", ms: -5 }, NOW);
    expect(bad.error?.msg).toBe("$.flow.delay(ms): the delay must be a number of milliseconds, 0 or more; got -5.");
  });
});

describe("newFlowToken", () => {
  it("gives 192-bit tokens that never repeat, across its draws of random bytes", () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 2_000; i++) tokens.add(newFlowToken());
    expect(tokens.size).toBe(2_000);
    for (const token of tokens) expect(Buffer.from(token, "base64url")).toHaveLength(24);
  });
});
