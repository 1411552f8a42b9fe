/**
 * The API shapes the Home, Errors, Subscriptions and Settings pages read,
 * from the server's TypeBox schemas (types only: nothing of the server is
 * bundled). Kept beside types.ts so parallel pages do not edit one list.
 */
import type { Static } from "@sinclair/typebox";
import type { EnvVarSchema } from "../../../src/api/schemas/env-vars.js";
import type { SubscriptionSchema } from "../../../src/api/schemas/workflows.js";

export type { WorkflowView, RunView, ErrorSummaryView } from "../../../src/api/schemas/workflows.js";
export type { OutboxMailView } from "../../../src/api/schemas/outbox.js";
export type { RegistryEntryView, PublishedComponentView } from "../../../src/api/schemas/registry.js";
export type { CreatedUserView } from "../../../src/api/schemas/accounts.js";

export type SubscriptionView = Static<typeof SubscriptionSchema>;
export type EnvVarView = Static<typeof EnvVarSchema>;

/**
 * GET /v1/users/me/activity (src/api/schemas/activity.ts, added for the
 * console in parallel; written out here until that schema is on main, then
 * replace with `Static<typeof ActivitySchema>`).
 */
export interface ActivityView {
  buckets: Array<{ minute: string; runs: number; events: number; errors: number }>;
  failing_workflows: Array<{ id: string; name: string; errors: number; last_error_at: string }>;
}

/** The workflow list's run counts (added with the activity route; absent on older servers). */
export interface WorkflowRunCounts {
  last_run_at?: string | null;
  runs_24h?: number;
  errors_24h?: number;
}
