import { api, apiData, segment } from "../../api/client";
import type { ErrorSummaryView, RunView, WorkflowRunCounts, WorkflowView } from "../../api/console-types";
import type { Page, PageParams } from "../../api/types";

export type ListedWorkflow = WorkflowView & WorkflowRunCounts;

export interface Replayed {
  error_id: string;
  event_id: string;
}

export const errorKeys = {
  workflows: ["workflows"] as const,
  workflow: (id: string) => ["workflows", id] as const,
  errors: (id: string) => ["workflows", id, "errors"] as const,
  runs: (id: string) => ["workflows", id, "runs"] as const,
};

export function fetchWorkflows(params: PageParams, signal?: AbortSignal): Promise<Page<ListedWorkflow>> {
  return api<Page<ListedWorkflow>>("GET", "/v1/users/me/workflows", { query: { ...params }, ...(signal ? { signal } : {}) });
}

export function fetchWorkflow(id: string, signal: AbortSignal): Promise<WorkflowView> {
  return apiData<WorkflowView>("GET", `/v1/workflows/${segment(id)}`, { signal });
}

/** The workflow's `$errors`, newest first, each with the seed's error event (expand=event). */
export function fetchErrors(id: string, params: PageParams, signal: AbortSignal): Promise<Page<ErrorSummaryView>> {
  return api<Page<ErrorSummaryView>>("GET", `/v1/workflows/${segment(id)}/$errors/event_summaries`, { query: { ...params, expand: "event" }, signal });
}

export function fetchRuns(id: string, params: PageParams, signal: AbortSignal): Promise<Page<RunView>> {
  return api<Page<RunView>>("GET", `/v1/workflows/${segment(id)}/runs`, { query: { ...params }, signal });
}

/** Where a replay starts and whose code it runs (see docs/workflows.md, Replay). */
export interface ReplayChoice {
  from: "trigger" | "failed_step";
  with_code: "current" | "failed_run";
}

export const TODAYS_REPLAY: ReplayChoice = { from: "trigger", with_code: "current" };

export function replayOne(workflowId: string, eventId: string, choice: ReplayChoice = TODAYS_REPLAY): Promise<Replayed> {
  return apiData<Replayed>("POST", `/v1/workflows/${segment(workflowId)}/$errors/${segment(eventId)}/replay`, { body: choice });
}

/** The given errors, or (no ids) every listed error; those that could not be replayed as asked come back in not_replayed, with why. */
export function replayMany(
  workflowId: string,
  eventIds?: string[],
  choice: ReplayChoice = TODAYS_REPLAY,
): Promise<{ count: number; replayed: Replayed[]; not_replayed: Array<{ error_id: string; reason: string }> }> {
  return apiData("POST", `/v1/workflows/${segment(workflowId)}/$errors/replay`, { body: { ...(eventIds ? { event_ids: eventIds } : {}), ...choice } });
}

export function updateErrorSettings(workflowId: string, settings: { error_notifications: boolean; error_retention: number }): Promise<WorkflowView> {
  return apiData<WorkflowView>("PUT", `/v1/workflows/${segment(workflowId)}`, { body: { settings } });
}

/**
 * The global error workflow: the one workflow marked is_error_workflow (made
 * with a user's first workflow). The API has no filter for it, so the list is
 * paged through until it shows up.
 */
export async function findErrorWorkflow(signal: AbortSignal): Promise<WorkflowView | null> {
  let params: PageParams = { limit: 100 };
  for (let pages = 0; pages < 20; pages++) {
    const page = await fetchWorkflows(params, signal);
    const found = page.data.find((workflow) => workflow.is_error_workflow);
    if (found) return found;
    if (page.page_info.end_cursor === null || page.page_info.count < (params.limit ?? 100)) return null;
    params = { limit: 100, after: page.page_info.end_cursor };
  }
  return null;
}
