import type { Workflow } from "../../domain/workflows.js";
import type { StepSend } from "../../sandbox/protocol.js";

/**
 * Where `$.send.*` calls go, carried out after the run has been recorded
 * (`emit` is appended with the run itself, in its transaction).
 */
export interface Destinations {
  carryOut(workflow: Workflow, runId: string, sends: StepSend[]): Promise<void>;
}
