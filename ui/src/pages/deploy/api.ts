/**
 * The deploy page's API calls. Types come from the API's own schemas (types
 * only), like ui/src/api/types.ts; the registry's are imported here to keep
 * that shared file untouched by this page.
 */
import { api, apiData, ApiError, segment } from "../../api/client";
import type { ComponentView, SourceView } from "../../api/types";
import type { OptionsPage, OptionsRequest } from "../../components/props-form";
import type { PublishedComponentView, RegistryEntryView } from "../../../../src/api/schemas/registry.js";

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
    return (await apiData<PublishedComponentView>("GET", `/v1/components/registry/${segment(key)}`)).component;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    try {
      return await apiData<ComponentView>("GET", `/v1/components/${segment(key)}`);
    } catch (second) {
      if (second instanceof ApiError && second.status === 404) {
        throw new ApiError(404, "NotFound", `No component has the key "${key}" in your registry. Check its spelling, or publish it first (runnel publish).`);
      }
      throw second;
    }
  }
}

/** The registry's source keys that match words (GET /v1/components/search). */
export async function searchSourceKeys(query: string, signal?: AbortSignal): Promise<string[]> {
  const found = await api<{ sources: string[]; actions: string[] }>("GET", "/v1/components/search", { query: { query }, ...(signal ? { signal } : {}) });
  return found.sources;
}

/** Every source key published, each once (GET /v1/components/registry lists every version). */
export async function publishedSourceKeys(signal?: AbortSignal): Promise<string[]> {
  const entries = await apiData<RegistryEntryView[]>("GET", "/v1/components/registry", signal ? { signal } : {});
  return [...new Set(entries.filter((entry) => entry.kind === "source").map((entry) => entry.key))];
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
