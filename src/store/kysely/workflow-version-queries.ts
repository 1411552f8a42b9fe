import type { Kysely, Selectable, Transaction } from "kysely";
import { KEPT_WORKFLOW_VERSIONS, type WorkflowVersion } from "../../domain/workflow-versions.js";
import type { Workflow, WorkflowStep } from "../../domain/workflows.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { fromJson, toJson } from "./json-columns.js";
import type { Database, WorkflowVersionRow } from "./schema.js";

type WorkflowVersionQueries = Pick<Store, "listWorkflowVersions" | "findWorkflowVersion">;

/** A workflow's saved versions (written with the workflow itself: see saveWorkflowVersion). */
export function workflowVersionQueries({ db }: QueryContext): WorkflowVersionQueries {
  return {
    async listWorkflowVersions(ownerId, workflowId, { limit, before }) {
      let query = db.selectFrom("workflow_versions").selectAll().where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId);
      if (before !== undefined) query = query.where("version", "<", before);
      return (await query.orderBy("version", "desc").limit(limit).execute()).map(toWorkflowVersion);
    },

    async findWorkflowVersion(ownerId, workflowId, version) {
      const row = await db.selectFrom("workflow_versions").selectAll().where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).where("version", "=", version).executeTakeFirst();
      return row ? toWorkflowVersion(row) : null;
    },
  };
}

/**
 * Writes the workflow's current version (in the transaction that saves the
 * workflow), then lets go of old ones: the last KEPT_WORKFLOW_VERSIONS stay,
 * and older ones while a listed run ran them. A version written again (the
 * same number: secrets sealed at rest after an upgrade) takes the new steps.
 */
export async function saveWorkflowVersion(trx: Kysely<Database> | Transaction<Database>, workflow: Workflow): Promise<void> {
  const version = workflow.version ?? 1;
  await trx
    .insertInto("workflow_versions")
    .values({ workflow_id: workflow.id, version, owner_id: workflow.ownerId, deployment_id: workflow.deploymentId, steps: toJson(workflow.steps), saved_at: workflow.updatedAt })
    .onConflict((conflict) => conflict.columns(["workflow_id", "version"]).doUpdateSet({ steps: toJson(workflow.steps), deployment_id: workflow.deploymentId }))
    .execute();
  if (version <= KEPT_WORKFLOW_VERSIONS) return;
  await trx
    .deleteFrom("workflow_versions")
    .where("workflow_id", "=", workflow.id)
    .where("version", "<=", version - KEPT_WORKFLOW_VERSIONS)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("runs")
            .select("runs.id")
            .whereRef("runs.workflow_id", "=", "workflow_versions.workflow_id")
            .whereRef("runs.workflow_version", "=", "workflow_versions.version"),
        ),
      ),
    )
    .execute();
}

function toWorkflowVersion(row: Selectable<WorkflowVersionRow>): WorkflowVersion {
  return {
    workflowId: row.workflow_id,
    ownerId: row.owner_id,
    version: Number(row.version),
    deploymentId: row.deployment_id,
    steps: fromJson<WorkflowStep[]>(row.steps),
    savedAt: Number(row.saved_at),
  };
}
