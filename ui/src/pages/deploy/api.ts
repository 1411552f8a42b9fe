/**
 * The deploy page's API calls. Types come from the API's own schemas (types
 * only), like ui/src/api/types.ts; the registry's are imported here to keep
 * that shared file untouched by this page.
 */
import { api, apiData, ApiError, segment } from "../../api/client";
import type { ComponentView, Page, SourceView } from "../../api/types";
import type { OptionsPage, OptionsRequest } from "../../components/props-form";
import type { PublishedComponentView, RegistryListingView } from "../../../../src/api/schemas/registry.js";

/** How the user gave the component: what POST /v1/components takes. */
export type ComponentInput = { component_code: string; filename?: string } | { component_url: string };

/** Saves (validates, bundles) a component; the answer carries its configurable props. */
export function saveComponent(input: ComponentInput): Promise<ComponentView> {
  return apiData<ComponentView>("POST", "/v1/components", { body: input });
}

/**
 * A component by key: the newest published version in the registry, else the
 * newest saved component with that key (as deploying by key resolves it).
 */
export async function componentByKey(key: string): Promise<ComponentView> {
  try {
    const published = await apiData<PublishedComponentView>("GET", `/v1/components/registry/${segment(key)}`);
    if (published.component) return published.component;
    throw new ApiError(400, "ValidationError", `"${key}" is an app, not a component: an app is not deployed. Components use it through an app prop ({ type: "app", app: "${key}" }).`);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    try {
      return await apiData<ComponentView>("GET", `/v1/components/${segment(key)}`);
    } catch (second) {
      if (second instanceof ApiError && second.status === 404) {
        throw new ApiError(404, "NotFound", `No component has the key "${key}" in the registry (Runnel's catalog and yours). Check its spelling, search above, or publish it first (runnel publish).`);
      }
      throw second;
    }
  }
}

export interface RegistryFilters {
  /** Words that must all appear in the key, name or description. */
  q: string;
  /** An app slug, or "" for every app. */
  app: string;
  /** "" for every kind. */
  type: "source" | "action" | "app" | "";
}

/** The registry's components (Runnel's catalog and yours) that match, keys alphabetically, all pages (GET /v1/components/registry). */
export async function searchRegistry(filters: RegistryFilters, signal?: AbortSignal): Promise<RegistryListingView[]> {
  const listings: RegistryListingView[] = [];
  let after: string | undefined;
  for (;;) {
    const query = { limit: 100, after, q: filters.q || undefined, app: filters.app || undefined, type: filters.type || undefined };
    const page = await api<Page<RegistryListingView>>("GET", "/v1/components/registry", { query, ...(signal ? { signal } : {}) });
    listings.push(...page.data);
    if (page.data.length < 100 || !page.page_info.end_cursor) return listings;
    after = page.page_info.end_cursor;
  }
}

/** The apps the registry has components of (the part of each key before its first "-") or has itself (an app's key is its slug), for the app filter. */
export async function registryApps(signal?: AbortSignal): Promise<string[]> {
  const all = await searchRegistry({ q: "", app: "", type: "" }, signal);
  const slugOf = (listing: RegistryListingView) => (listing.type === "app" ? listing.key : listing.key.slice(0, listing.key.indexOf("-")));
  return [...new Set(all.map(slugOf).filter(Boolean))].sort();
}

export interface DeployInput {
  component_id: string;
  name?: string;
  configured_props: Record<string, unknown>;
}

export function deploySource(input: DeployInput): Promise<SourceView> {
  return apiData<SourceView>("POST", "/v1/sources", { body: input });
}

/** A page of a prop's async options for a saved component not deployed yet (POST /v1/components/props/options). */
export function draftPropOptions(componentId: string, request: OptionsRequest, signal: AbortSignal): Promise<OptionsPage> {
  return apiData<OptionsPage>("POST", "/v1/components/props/options", {
    body: {
      component: { id: componentId },
      prop: request.prop,
      configured_props: request.configuredProps,
      page: request.page,
      ...(request.prevContext === null || request.prevContext === undefined ? {} : { prev_context: request.prevContext }),
      ...(request.query ? { query: request.query } : {}),
    },
    signal,
  });
}
