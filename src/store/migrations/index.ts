import type { Migration, MigrationProvider } from "kysely";
import { accountsMigration } from "./0001-accounts.js";
import { sourcesMigration } from "./0002-sources.js";
import { sourceLimitsMigration } from "./0003-source-limits.js";
import { componentLockMigration } from "./0004-component-lock.js";
import { subscriptionsMigration } from "./0005-subscriptions.js";
import { workflowsMigration } from "./0006-workflows.js";
import { outboxMigration } from "./0007-outbox.js";
import { registryMigration } from "./0008-registry.js";
import { retentionCountsMigration } from "./0009-retention-counts.js";
import { deliveryInterruptionsMigration } from "./0010-delivery-interruptions.js";
import { deliveryClaimerMigration } from "./0011-delivery-claimer.js";
import { webhooksMigration } from "./0012-webhooks.js";
import { dataStoresMigration } from "./0013-data-stores.js";
import { sendOutboxMigration } from "./0014-send-outbox.js";
import { userEnvVarsMigration } from "./0015-user-env-vars.js";
import { bundleSourceMapsMigration } from "./0016-bundle-source-maps.js";
import { consoleSessionsMigration } from "./0017-console-sessions.js";
import { appsAndAccountsMigration } from "./0019-apps-and-accounts.js";
import { catalogMigration } from "./0020-catalog.js";
import { registryAppsMigration } from "./0021-registry-apps.js";
import { processesMigration } from "./0022-processes.js";
import { accountRefreshLeaseMigration } from "./0023-account-refresh-lease.js";
import { runRetriesMigration } from "./0024-run-retries.js";
import { runGateMigration } from "./0025-run-gate.js";
import { runFlowMigration } from "./0026-run-flow.js";
import { workflowVersionsMigration } from "./0027-workflow-versions.js";
import { lineFollowersMigration } from "./0028-line-followers.js";
import { timerTickRunsMigration } from "./0029-timer-tick-runs.js";

/**
 * Every migration, in order, for both dialects. Names sort in the order they
 * run; never rename or edit a migration that has shipped, add a new one.
 */
const MIGRATIONS: Record<string, Migration> = {
  "0001-accounts": accountsMigration,
  "0002-sources": sourcesMigration,
  "0003-source-limits": sourceLimitsMigration,
  "0004-component-lock": componentLockMigration,
  "0005-subscriptions": subscriptionsMigration,
  "0006-workflows": workflowsMigration,
  "0007-outbox": outboxMigration,
  "0008-registry": registryMigration,
  "0009-retention-counts": retentionCountsMigration,
  "0010-delivery-interruptions": deliveryInterruptionsMigration,
  "0011-delivery-claimer": deliveryClaimerMigration,
  "0012-webhooks": webhooksMigration,
  "0013-data-stores": dataStoresMigration,
  "0014-send-outbox": sendOutboxMigration,
  "0015-user-env-vars": userEnvVarsMigration,
  "0016-bundle-source-maps": bundleSourceMapsMigration,
  "0017-console-sessions": consoleSessionsMigration,
  "0019-apps-and-accounts": appsAndAccountsMigration,
  "0020-catalog": catalogMigration,
  "0021-registry-apps": registryAppsMigration,
  "0022-processes": processesMigration,
  "0023-account-refresh-lease": accountRefreshLeaseMigration,
  "0024-run-retries": runRetriesMigration,
  "0025-run-gate": runGateMigration,
  "0026-run-flow": runFlowMigration,
  "0027-workflow-versions": workflowVersionsMigration,
  "0028-line-followers": lineFollowersMigration,
  "0029-timer-tick-runs": timerTickRunsMigration,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return MIGRATIONS;
  },
};
