import type { WorkflowStep } from "./workflows.js";

/**
 * One saved version of a workflow: its steps as they were saved (each names
 * its saved component, which is never changed in place, so the steps are the
 * code). Every save (create, and each update) makes the next version; a run
 * records the version it ran, so that replaying its error can run that code.
 */
export interface WorkflowVersion {
  workflowId: string;
  ownerId: string;
  /** 1 for the workflow as created, one more at each update. */
  version: number;
  /** The `d_…` the workflow had while this version was current (`original_context.deployment_id`). */
  deploymentId: string;
  steps: WorkflowStep[];
  savedAt: number;
}

/**
 * Versions always kept per workflow, newest first. Older ones are kept while
 * a run still listed (at most RUN_RETENTION per workflow) ran them, so that
 * any listed failed run can be replayed with its own code; the rest go at the
 * next save.
 */
export const KEPT_WORKFLOW_VERSIONS = 20;
