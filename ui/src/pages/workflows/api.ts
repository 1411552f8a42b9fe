import type { Static } from "@sinclair/typebox";
import type { LogSchema } from "../../../../src/api/schemas/sources.js";
import { api, apiData, segment } from "../../api/client";
import type { Page, PageParams } from "../../api/types";
import type { RegistryListingView } from "../../../../src/api/schemas/registry.js";
import type { PublishedComponentView, RegistryEntryView, RunView, WorkflowEmitSummaryView, SourceView, ComponentView, WorkflowDetails, WorkflowListItem, WaitingEventView } from "./types";

/** The workflows pages' calls to /v1, and their query keys (so a save refreshes what shows the workflow). */
export const workflowKeys = {
  all: ["workflows"] as const,
  list: ["workflows", "list"] as const,
  one: (id: string) => ["workflows", "one", id] as const,
  runs: (id: string) => ["workflows", "runs", id] as const,
  logs: (id: string) => ["workflows", "logs", id] as const,
  emits: (id: string) => ["workflows", "emits", id] as const,
  run: (id: string) => ["runs", id] as const,
  waiting: (id: string) => ["workflows", "waiting", id] as const,
};

export function listWorkflows(params: PageParams, signal: AbortSignal): Promise<Page<WorkflowListItem>> {
  return api<Page<WorkflowListItem>>("GET", "/v1/users/me/workflows", { query: { ...params }, signal });
}

export async function getWorkflow(id: string, signal?: AbortSignal): Promise<WorkflowListItem> {
  return (await api<WorkflowDetails>("GET", `/v1/workflows/${segment(id)}`, { signal })).data;
}

/** What POST and PUT answer: the workflow, and the fields the API accepted but ignores. */
export interface WorkflowWritten {
  data: WorkflowListItem;
  warnings?: Array<{ field: string; message: string }>;
}

export function createWorkflow(body: Record<string, unknown>): Promise<WorkflowWritten> {
  return api<WorkflowWritten>("POST", "/v1/workflows", { body });
}

export function updateWorkflow(id: string, body: Record<string, unknown>): Promise<WorkflowWritten> {
  return api<WorkflowWritten>("PUT", `/v1/workflows/${segment(id)}`, { body });
}

export function deleteWorkflow(id: string): Promise<void> {
  return api<void>("DELETE", `/v1/workflows/${segment(id)}`);
}

export function listRuns(workflowId: string, params: PageParams, signal: AbortSignal): Promise<Page<RunView>> {
  return api<Page<RunView>>("GET", `/v1/workflows/${segment(workflowId)}/runs`, { query: { ...params }, signal });
}

export type LogView = Static<typeof LogSchema>;

export function listLogs(workflowId: string, params: PageParams, signal: AbortSignal): Promise<Page<LogView>> {
  return api<Page<LogView>>("GET", `/v1/workflows/${segment(workflowId)}/logs`, { query: { ...params }, signal });
}

/** What the workflow emitted with $.send.emit, each with its event. */
export function listEmits(workflowId: string, params: PageParams, signal: AbortSignal): Promise<Page<WorkflowEmitSummaryView>> {
  return api<Page<WorkflowEmitSummaryView>>("GET", `/v1/workflows/${segment(workflowId)}/event_summaries`, { query: { ...params, expand: "event" }, signal });
}

export function getRun(id: string, signal?: AbortSignal): Promise<RunView> {
  return apiData<RunView>("GET", `/v1/runs/${segment(id)}`, { signal });
}

/** Cancels a waiting run (the run, cancelled) or a running one (it stops before its next step). */
/** The events waiting at the workflow's gate, in line order. */
export function listWaiting(id: string, params: PageParams, signal: AbortSignal): Promise<Page<WaitingEventView>> {
  return api<Page<WaitingEventView>>("GET", `/v1/workflows/${segment(id)}/waiting`, { query: { ...params }, signal });
}

/** Cancels an event waiting at the workflow's gate: the answer is its run, recorded cancelled. */
export function cancelWaiting(id: string, eventId: string): Promise<RunView> {
  return apiData<RunView>("POST", `/v1/workflows/${segment(id)}/waiting/${segment(eventId)}/cancel`);
}

export function cancelRun(id: string): Promise<RunView | { run_id: string; status: "cancelling" }> {
  return apiData<RunView | { run_id: string; status: "cancelling" }>("POST", `/v1/runs/${segment(id)}/cancel`);
}

/**
 * Runs the workflow once on `event` and waits for the finished run (the
 * server waits up to 30 s; a longer run answers 202 with its id only).
 */
export async function runWorkflow(id: string, event: unknown): Promise<{ run: RunView } | { runId: string }> {
  const answer = await api<{ data: RunView | { run_id: string } }>("POST", `/v1/workflows/${segment(id)}/runs`, { body: { event }, query: { wait: true } });
  return "run_id" in answer.data ? { runId: answer.data.run_id } : { run: answer.data };
}

/** Every version of every key in the registry (Runnel's catalog and yours), from its per-key listing, all pages. */
export async function listRegistry(signal?: AbortSignal): Promise<RegistryEntryView[]> {
  const entries: RegistryEntryView[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await api<Page<RegistryListingView>>("GET", "/v1/components/registry", { query: { limit: 100, after }, signal });
    for (const listing of page.data) for (const version of listing.versions) entries.push({ key: listing.key, version: version.version, kind: listing.type, published_at: version.published_at });
    if (page.data.length < 100 || !page.page_info.end_cursor) return entries;
    after = page.page_info.end_cursor;
  }
}

export function getPublished(key: string, version: string | undefined, signal?: AbortSignal): Promise<PublishedComponentView> {
  return apiData<PublishedComponentView>("GET", `/v1/components/registry/${segment(key)}`, { query: { version }, signal });
}

export function getComponent(id: string, signal?: AbortSignal): Promise<ComponentView> {
  return apiData<ComponentView>("GET", `/v1/components/${segment(id)}`, { signal });
}

/** The user's sources, for a trigger on another source's events (the first 100: enough to pick from). */
export async function listSources(signal?: AbortSignal): Promise<SourceView[]> {
  return (await api<Page<SourceView>>("GET", "/v1/users/me/sources", { query: { limit: 100 }, signal })).data;
}
