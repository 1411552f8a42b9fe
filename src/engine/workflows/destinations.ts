import type { Workflow } from "../../domain/workflows.js";
import type { StepSend } from "../../sandbox/protocol.js";

/**
 * Where `$.send.*` calls go, carried out after the run has been recorded
 * (`emit` is appended with the run itself, in its transaction).
 */
export interface Destinations {
  /** What became of each send, in the order given (an emit counts as delivered: it was appended already). */
  carryOut(workflow: Workflow, runId: string, sends: StepSend[]): Promise<CarriedOut[]>;
}

export interface CarriedOut {
  status: "delivered" | "failed";
  /** What the destination said (the answer's status, the object written) or why it failed; null when nothing. */
  detail: string | null;
}
