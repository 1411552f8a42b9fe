import { useQuery } from "@tanstack/react-query";
import { api, apiData } from "../../api/client";
import type { SubscriptionView } from "../../api/console-types";
import type { Page, SourceView } from "../../api/types";
import { fetchWorkflows, type ListedWorkflow } from "../errors/errors-api";

export const subscriptionsKey = ["subscriptions"] as const;

export interface SubscriptionKey {
  emitter_id: string;
  listener_id: string;
  event_name: string;
}

export function fetchSubscriptions(signal: AbortSignal): Promise<SubscriptionView[]> {
  return apiData<SubscriptionView[]>("GET", "/v1/users/me/subscriptions", { signal });
}

export function createSubscription(key: SubscriptionKey): Promise<SubscriptionView> {
  return apiData<SubscriptionView>("POST", "/v1/subscriptions", { body: key });
}

/** The API names a subscription by its three fields (and refuses any other query parameter). */
export function deleteSubscription({ emitter_id, listener_id, event_name }: SubscriptionKey): Promise<void> {
  return api<void>("DELETE", "/v1/subscriptions", { query: { emitter_id, listener_id, event_name } });
}

/** `$errors` subscriptions route errors (the specification shows them apart from a listener's triggers). */
export function isErrorRouting(subscription: SubscriptionView): boolean {
  return subscription.event_name === "$errors";
}

export interface Emitters {
  workflows: ListedWorkflow[];
  sources: SourceView[];
  /** A readable name for an emitter or listener id (globs and unknown ids as they are). */
  nameOf: (id: string) => string;
}

const GLOB_NAMES: Record<string, string> = { "p_*": "Every workflow (p_*)", "dc_*": "Every source (dc_*)" };

/** The user's workflows and sources (first 100 of each): choices for a subscription, names for ids. */
export function useEmitters() {
  return useQuery({
    queryKey: ["subscriptions", "emitters"],
    queryFn: async ({ signal }): Promise<Emitters> => {
      const [workflows, sources] = await Promise.all([
        fetchWorkflows({ limit: 100 }, signal),
        api<Page<SourceView>>("GET", "/v1/users/me/sources", { query: { limit: 100 }, signal }),
      ]);
      const names = new Map<string, string>();
      for (const workflow of workflows.data) names.set(workflow.id, workflow.name);
      for (const source of sources.data) names.set(source.id, source.name);
      return {
        workflows: workflows.data,
        sources: sources.data,
        nameOf: (id) => GLOB_NAMES[id] ?? names.get(id) ?? id,
      };
    },
  });
}
