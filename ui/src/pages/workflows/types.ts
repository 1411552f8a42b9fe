/**
 * The API shapes the workflows pages read, from the server's TypeBox schemas
 * (types only: nothing of the server is bundled). Kept beside the pages rather
 * than in api/types.ts so that helpers working in parallel do not collide there.
 */
export type { WorkflowView, RunView, WorkflowEmitSummaryView } from "../../../../src/api/schemas/workflows.js";
export type { RegistryEntryView, PublishedComponentView } from "../../../../src/api/schemas/registry.js";
export type { SourceView, ComponentView } from "../../../../src/api/schemas/sources.js";
export type { WaitingEventView } from "../../../../src/api/schemas/run-gate.js";

import type { WorkflowView, RunView } from "../../../../src/api/schemas/workflows.js";

/** What the console shows beside each workflow: its last run and its runs and errors of the last 24 hours. */
export type WorkflowActivity = Pick<WorkflowView, "last_run_at" | "runs_24h" | "errors_24h">;

export type WorkflowListItem = WorkflowView & WorkflowActivity;

/** GET /v1/workflows/<id>: `{data}` with the hosted API's triggers beside it (only `data` is read). */
export interface WorkflowDetails {
  data: WorkflowListItem;
}

export type RunStep = RunView["steps"][number];
