/**
 * The API shapes the Home, Errors, Subscriptions and Settings pages read,
 * from the server's TypeBox schemas (types only: nothing of the server is
 * bundled). Kept beside types.ts so parallel pages do not edit one list.
 */
import type { Static } from "@sinclair/typebox";
import type { EnvVarSchema } from "../../../src/api/schemas/env-vars.js";
import type { SubscriptionSchema } from "../../../src/api/schemas/workflows.js";

import type { WorkflowView } from "../../../src/api/schemas/workflows.js";
export type { WorkflowView, RunView, ErrorSummaryView } from "../../../src/api/schemas/workflows.js";
export type { OutboxMailView } from "../../../src/api/schemas/outbox.js";
export type { RegistryEntryView, RegistryListingView, PublishedComponentView } from "../../../src/api/schemas/registry.js";
export type { CreatedUserView } from "../../../src/api/schemas/accounts.js";

export type SubscriptionView = Static<typeof SubscriptionSchema>;
export type EnvVarView = Static<typeof EnvVarSchema>;

export type { ActivityView } from "../../../src/api/schemas/activity.js";
export type { StatusView } from "../../../src/api/schemas/status.js";

/** The workflow list's run counts. */
export type WorkflowRunCounts = Pick<WorkflowView, "last_run_at" | "runs_24h" | "errors_24h">;
