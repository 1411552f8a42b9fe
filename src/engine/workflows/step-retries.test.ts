import { describe, expect, it } from "vitest";
import { validateRetryPolicy } from "../../domain/run-retries.js";
import type { Workflow } from "../../domain/workflows.js";
import type { ClaimedDelivery } from "../../store/store.js";
import { failRun, startRun } from "./run-state.js";
import { settleFailedAttempt } from "./step-retries.js";

/** A fake clock and a fixed jitter: the due times are exact. */
const NOW = 1_700_000_000_000;

const workflow = (settings: Partial<Workflow["settings"]>, stepRetries?: Workflow["steps"][number]["retries"]): Workflow => ({
  id: "p_1",
  ownerId: "u_1",
  name: "W",
  nameSlug: "w",
  active: true,
  triggerSourceId: null,
  triggerOwned: false,
  triggerKind: "none",
  steps: [{ id: "c_1", name: "one", componentId: "sc_1", key: null, props: {}, ...(stepRetries ? { retries: stepRetries } : {}) }],
  respond: "immediately",
  settings: { errorNotifications: true, errorRetention: 100, ...settings },
  isErrorWorkflow: false,
  deploymentId: "d_1",
  createdAt: NOW,
  updatedAt: NOW,
});

const delivery: ClaimedDelivery = { listenerId: "p_1", emitterId: "p_1", eventId: "1-0", ownerId: "u_1", subscriptionId: "s", channel: "$run", status: "running", attempts: 1, interruptions: 0, availableAt: NOW, createdAt: NOW, event: {}, indexedAtMs: NOW };

function failedRun(of: Workflow, error: { code: "UserError" | "ConfigurationError"; retryable?: boolean } = { code: "UserError" }) {
  const run = startRun(of, { ...delivery }, "other", NOW);
  failRun(run, of.steps[0]!, { code: error.code, name: "Error", message: "boom", retryable: error.retryable }, NOW);
  return run;
}

describe("settleFailedAttempt", () => {
  it("makes the run retrying, due after the backoff of this try, until the tries run out", () => {
    const of = workflow({ retries: validateRetryPolicy({ max: 2, backoff: "exponential", delay_ms: 100 }, "r") });
    const run = failedRun(of);
    settleFailedAttempt(of, run, NOW, () => 0.5);
    expect(run.status).toBe("retrying");
    expect(run.nextAttemptAt).toBe(NOW + 100);
    run.status = "error";
    settleFailedAttempt(of, run, NOW + 1000, () => 0.5);
    expect(run.nextAttemptAt).toBe(NOW + 1000 + 200);
    run.status = "error";
    settleFailedAttempt(of, run, NOW + 2000, () => 0.5);
    expect(run.status).toBe("error");
    expect(run.attempts.map((tried) => [tried.attempt, tried.willRetry, tried.nextAttemptAt])).toEqual([
      [1, true, NOW + 100],
      [2, true, NOW + 1200],
      [3, false, null],
    ]);
  });

  it("prefers the step's retries, and leaves runs without retries (or with an error not to retry) failed", () => {
    const of = workflow({ retries: validateRetryPolicy({ max: 5, delay_ms: 0 }, "r") }, validateRetryPolicy({ max: 0 }, "s"));
    const run = failedRun(of);
    settleFailedAttempt(of, run, NOW);
    expect(run.status).toBe("error");
    expect(run.attempts).toHaveLength(1);

    const none = workflow({});
    const plain = failedRun(none);
    settleFailedAttempt(none, plain, NOW);
    expect(plain.status).toBe("error");
    expect(plain.attempts).toEqual([]);

    const retried = workflow({ retries: validateRetryPolicy({ max: 5 }, "r") });
    for (const error of [{ code: "ConfigurationError" as const }, { code: "UserError" as const, retryable: false }]) {
      const final = failedRun(retried, error);
      settleFailedAttempt(retried, final, NOW);
      expect(final.status).toBe("error");
      expect(final.failedAttempt?.willRetry).toBe(false);
    }
  });
});
