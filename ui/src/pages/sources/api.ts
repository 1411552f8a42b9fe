import { api, apiData, segment } from "../../api/client";
import type { ComponentView, EventSummaryView, Page, PageParams, SourceView } from "../../api/types";

/**
 * A source as the list shows it. `last_event_at` and `event_count` are being
 * added to the API's source view; until they are, they are absent and shown as nothing.
 */
export type SourceListItem = SourceView & { last_event_at?: number | string | null; event_count?: number | null };

export interface LogView {
  id: string;
  ts: number;
  stream: string;
  text: string;
}

export interface RunResultView {
  ok: boolean;
  duration_ms: number;
  events: EventSummaryView[];
  error?: { code: string; name: string; message: string; stack?: string };
}

export const sourceKeys = {
  all: ["sources"] as const,
  list: () => [...sourceKeys.all, "list"] as const,
  one: (id: string) => [...sourceKeys.all, id] as const,
  events: (id: string) => [...sourceKeys.all, id, "events"] as const,
  logs: (id: string) => [...sourceKeys.all, id, "logs"] as const,
};

export const listSources = (params: PageParams, signal?: AbortSignal) => api<Page<SourceListItem>>("GET", "/v1/users/me/sources", { query: { ...params }, signal });
export const getSource = (id: string, signal?: AbortSignal) => apiData<SourceListItem>("GET", `/v1/sources/${segment(id)}`, { signal });
export const getComponent = (id: string, signal?: AbortSignal) => apiData<ComponentView>("GET", `/v1/components/${segment(id)}`, { signal });
/** The most recent 100 events with their bodies, newest first (the seed's inspector). */
export const recentEvents = (id: string, signal?: AbortSignal) =>
  api<Page<EventSummaryView>>("GET", `/v1/sources/${segment(id)}/event_summaries`, { query: { limit: 100, expand: "event" }, signal });
export const recentLogs = (id: string, signal?: AbortSignal) => api<Page<LogView>>("GET", `/v1/sources/${segment(id)}/logs`, { query: { limit: 100 }, signal });
export const updateSource = (id: string, body: { active?: boolean; configured_props?: Record<string, unknown>; component_code?: string; name?: string }) =>
  apiData<SourceListItem>("PUT", `/v1/sources/${segment(id)}`, { body });
export const deleteSource = (id: string) => api<void>("DELETE", `/v1/sources/${segment(id)}`);
export const runSource = (id: string) => apiData<RunResultView>("POST", `/v1/sources/${segment(id)}/run`, { body: {} });
