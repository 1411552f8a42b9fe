import { describe, expect, it } from "vitest";
import { WorkflowResponses } from "./workflow-responses.js";

const response = (status: number) => ({ kind: "response" as const, response: { status, headers: {}, body: null } });

describe("WorkflowResponses", () => {
  it("hands a waiting caller the first answer of its run", async () => {
    const responses = new WorkflowResponses();
    const waiting = responses.wait("dc_a", "1-0", 5_000);
    responses.settle("dc_a", "1-0", response(201));
    responses.settle("dc_a", "1-0", response(500));
    expect(await waiting).toEqual(response(201));
  });

  it("keeps an answer that came before its caller", async () => {
    const responses = new WorkflowResponses();
    responses.settle("dc_a", "2-0", { kind: "ended", status: "error", runId: "run_1", workflowName: "W", stepName: "boom" });
    expect(await responses.wait("dc_a", "2-0", 5_000)).toEqual({ kind: "ended", status: "error", runId: "run_1", workflowName: "W", stepName: "boom" });
  });

  it("keeps callers of different events apart, and gives up after the time limit", async () => {
    const responses = new WorkflowResponses();
    const first = responses.wait("dc_a", "3-0", 20);
    const other = responses.wait("dc_b", "3-0", 5_000);
    responses.settle("dc_b", "3-0", response(202));
    expect(await other).toEqual(response(202));
    expect(await first).toBeNull();
  });
});
