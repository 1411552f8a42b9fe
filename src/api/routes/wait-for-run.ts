import type { WorkflowRun } from "../../domain/workflows.js";

/** How often the store is asked: a run is recorded by whichever worker took it, maybe another process. */
const POLL_MS = 100;

/** Reads until the run is recorded, or `timeoutMs` passed (null then). */
export async function waitForRun(find: () => Promise<WorkflowRun | null>, timeoutMs: number): Promise<WorkflowRun | null> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = await find();
    if (run || Date.now() >= until) return run;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
