import type { Selectable } from "kysely";
import { ConflictError } from "../../domain/errors.js";
import type { RunAttempt } from "../../domain/run-retries.js";
import { TRIGGER_KINDS, type RunContinuation, type RunError, type RunStatus, type StepRecord, type TriggerKind, type Workflow, type WorkflowRun, type WorkflowStep } from "../../domain/workflows.js";
import type { WorkflowSettings } from "../../domain/workflow-rules.js";
import { gateOf } from "../../domain/run-gate.js";
import { syncGateWithin } from "./run-gate-queries.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { readIdPage } from "./id-paging.js";
import { fromJson, toJson } from "./json-columns.js";
import type { RunRow, WorkflowRow } from "./schema.js";
import { saveWorkflowVersion } from "./workflow-version-queries.js";

type WorkflowQueries = Pick<
  Store,
  | "createWorkflow"
  | "findWorkflow"
  | "listWorkflows"
  | "takenWorkflowSlugs"
  | "updateWorkflow"
  | "deleteWorkflow"
  | "findErrorWorkflow"
  | "workflowsTriggeredBy"
  | "listRuns"
  | "findRun"
>;

/** Workflows and their recorded runs. */
export function workflowQueries({ db, isUniqueViolation }: QueryContext): WorkflowQueries {
  const slugTaken = (error: unknown, slug: string) =>
    isUniqueViolation(error) ? new ConflictError(`You already have a workflow named "${slug}". Choose another name.`, { field: "name" }) : error;

  return {
    async createWorkflow(workflow) {
      try {
        await db.transaction().execute(async (trx) => {
          await trx.insertInto("workflows").values(toWorkflowRow(workflow)).execute();
          await saveWorkflowVersion(trx, workflow);
          // A gated workflow's gate row, with its settings.
          if (gateOf(workflow.settings)) await syncGateWithin(trx, workflow, workflow.updatedAt);
        });
      } catch (error) {
        throw slugTaken(error, workflow.nameSlug);
      }
      return workflow;
    },

    async findWorkflow(ownerId, idOrSlug) {
      const row = await db
        .selectFrom("workflows")
        .selectAll()
        .where("owner_id", "=", ownerId)
        .where((eb) => eb.or([eb("id", "=", idOrSlug), eb("name_slug", "=", idOrSlug)]))
        .executeTakeFirst();
      return row ? toWorkflow(row) : null;
    },

    listWorkflows(ownerId, page) {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("workflows").selectAll().where("owner_id", "=", ownerId);
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          return (await query.orderBy("id", order).limit(limit).execute()).map(toWorkflow);
        },
        async () => Number((await db.selectFrom("workflows").select((eb) => eb.fn.countAll<number>().as("count")).where("owner_id", "=", ownerId).executeTakeFirstOrThrow()).count),
      );
    },

    async takenWorkflowSlugs(ownerId, base) {
      const rows = await db
        .selectFrom("workflows")
        .select("name_slug")
        .where("owner_id", "=", ownerId)
        .where((eb) => eb.or([eb("name_slug", "=", base), eb("name_slug", "like", `${base}-%`)]))
        .execute();
      return new Set(rows.map((row) => row.name_slug));
    },

    async updateWorkflow(workflow) {
      const { id, owner_id, created_at, ...fields } = toWorkflowRow(workflow);
      try {
        await db.transaction().execute(async (trx) => {
          await trx.updateTable("workflows").set(fields).where("id", "=", id).where("owner_id", "=", owner_id).execute();
          // A step's store stays with the step (its id stays with its name); the stores of steps removed go with them.
          const kept = workflow.steps.map((step) => step.id);
          let stale = trx.deleteFrom("step_store_entries").where("workflow_id", "=", id).where("owner_id", "=", owner_id);
          if (kept.length > 0) stale = stale.where("step_id", "not in", kept);
          await stale.execute();
          await saveWorkflowVersion(trx, workflow);
          // Its gate follows its settings (and a raised limit, or none, lets waiting events through).
          await syncGateWithin(trx, workflow, Date.now());
        });
      } catch (error) {
        throw slugTaken(error, workflow.nameSlug);
      }
    },

    deleteWorkflow(ownerId, workflowId) {
      return db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom("workflows").where("id", "=", workflowId).where("owner_id", "=", ownerId).executeTakeFirst();
        if (Number(deleted.numDeletedRows) === 0) return false;
        await trx.deleteFrom("runs").where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("workflow_versions").where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("step_store_entries").where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("events").where("emitter_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("emitter_state").where("emitter_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("logs").where("emitter_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("deliveries").where("listener_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("run_gate").where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx.deleteFrom("workflow_gates").where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        // Its runs' sends not carried out yet go with it: nobody is left to send them for.
        await trx.deleteFrom("send_outbox").where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).execute();
        await trx
          .deleteFrom("subscriptions")
          .where("owner_id", "=", ownerId)
          .where((eb) => eb.or([eb("listener_id", "=", workflowId), eb("emitter_id", "=", workflowId)]))
          .execute();
        return true;
      });
    },

    async findErrorWorkflow(ownerId) {
      const row = await db.selectFrom("workflows").selectAll().where("owner_id", "=", ownerId).where("is_error_workflow", "=", 1).orderBy("id", "asc").executeTakeFirst();
      return row ? toWorkflow(row) : null;
    },

    async workflowsTriggeredBy(ownerId, sourceId) {
      const rows = await db.selectFrom("workflows").selectAll().where("trigger_source_id", "=", sourceId).where("owner_id", "=", ownerId).execute();
      return rows.map(toWorkflow);
    },

    listRuns(ownerId, workflowId, page) {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("runs").selectAll().where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId);
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          return (await query.orderBy("id", order).limit(limit).execute()).map(toRun);
        },
        async () =>
          Number(
            (
              await db
                .selectFrom("runs")
                .select((eb) => eb.fn.countAll<number>().as("count"))
                .where("workflow_id", "=", workflowId)
                .where("owner_id", "=", ownerId)
                .executeTakeFirstOrThrow()
            ).count,
          ),
      );
    },

    async findRun(ownerId, runId) {
      const row = await db.selectFrom("runs").selectAll().where("id", "=", runId).where("owner_id", "=", ownerId).executeTakeFirst();
      return row ? toRun(row) : null;
    },
  };
}

function toWorkflowRow(workflow: Workflow): WorkflowRow {
  return {
    id: workflow.id,
    owner_id: workflow.ownerId,
    name: workflow.name,
    name_slug: workflow.nameSlug,
    active: workflow.active ? 1 : 0,
    trigger_source_id: workflow.triggerSourceId,
    trigger_owned: workflow.triggerOwned ? 1 : 0,
    trigger_kind: workflow.triggerKind,
    steps: toJson(workflow.steps),
    respond: workflow.respond,
    settings: toJson(workflow.settings),
    is_error_workflow: workflow.isErrorWorkflow ? 1 : 0,
    deployment_id: workflow.deploymentId,
    created_at: workflow.createdAt,
    updated_at: workflow.updatedAt,
    version: workflow.version ?? 1,
  };
}

function toWorkflow(row: Selectable<WorkflowRow>): Workflow {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    nameSlug: row.name_slug,
    active: Number(row.active) === 1,
    triggerSourceId: row.trigger_source_id,
    triggerOwned: Number(row.trigger_owned) === 1,
    triggerKind: toTriggerKind(row.trigger_kind),
    steps: fromJson<WorkflowStep[]>(row.steps),
    respond: row.respond === "workflow" ? "workflow" : "immediately",
    settings: fromJson<WorkflowSettings>(row.settings),
    isErrorWorkflow: Number(row.is_error_workflow) === 1,
    deploymentId: row.deployment_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    // Only when past the first (absent means 1, as for every workflow never updated).
    ...(Number(row.version ?? 1) !== 1 ? { version: Number(row.version) } : {}),
  };
}

/**
 * The columns a later attempt of a run writes over its `retrying` row: a
 * run's row is inserted once by its run key, and replaced only while it
 * waits to retry, by an attempt later than the one recorded (two claimers
 * of one delivery record it once).
 */
/** The statuses a row may hold; anything else reads as success (none is written). */
const KNOWN_RUN_STATUSES: readonly RunStatus[] = ["success", "error", "exited", "retrying", "delayed", "cancelled"];

export const RETRIED_RUN_COLUMNS = ["status", "steps", "error", "exit_reason", "finished_at", "duration_ms", "attempt", "attempts", "next_attempt_at", "continuation", "workflow_version"] as const;

export function toRunRow(run: WorkflowRun): RunRow {
  return {
    id: run.id,
    owner_id: run.ownerId,
    workflow_id: run.workflowId,
    emitter_id: run.emitterId,
    event_id: run.eventId,
    status: run.status,
    trigger_event: toJson(run.triggerEvent),
    steps: toJson(run.steps),
    error: run.error === null ? null : toJson(run.error),
    exit_reason: run.exitReason,
    replay_of: run.replayOf,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    duration_ms: run.durationMs,
    attempt: run.attempt ?? 1,
    attempts: run.attempts && run.attempts.length > 0 ? toJson(run.attempts) : null,
    next_attempt_at: run.nextAttemptAt ?? null,
    continuation: run.continuation ? toJson(run.continuation) : null,
    workflow_version: run.workflowVersion ?? null,
  };
}

export function toRun(row: Selectable<RunRow>): WorkflowRun {
  const status = (KNOWN_RUN_STATUSES as readonly string[]).includes(row.status) ? (row.status as RunStatus) : "success";
  return {
    id: row.id,
    ownerId: row.owner_id,
    workflowId: row.workflow_id,
    emitterId: row.emitter_id,
    eventId: row.event_id,
    status,
    triggerEvent: fromJson<unknown>(row.trigger_event),
    // Runs recorded before sends were kept have none.
    steps: fromJson<StepRecord[]>(row.steps).map((step) => ({ ...step, sends: step.sends ?? [] })),
    error: fromJson<RunError | null>(row.error),
    exitReason: row.exit_reason,
    replayOf: row.replay_of,
    startedAt: Number(row.started_at),
    finishedAt: Number(row.finished_at),
    durationMs: Number(row.duration_ms),
    // Only what differs from a run of one attempt (every run recorded before 0024, and most since).
    ...(Number(row.attempt ?? 1) !== 1 ? { attempt: Number(row.attempt) } : {}),
    ...(row.attempts ? { attempts: fromJson<RunAttempt[]>(row.attempts) } : {}),
    ...(row.next_attempt_at !== null && row.next_attempt_at !== undefined ? { nextAttemptAt: Number(row.next_attempt_at) } : {}),
    ...(row.continuation ? { continuation: fromJson<RunContinuation>(row.continuation) } : {}),
    ...(row.cancelled_by ? { cancelledBy: row.cancelled_by } : {}),
    ...(row.workflow_version !== null && row.workflow_version !== undefined ? { workflowVersion: Number(row.workflow_version) } : {}),
  };
}

function toTriggerKind(value: string): TriggerKind {
  return (TRIGGER_KINDS as readonly string[]).includes(value) ? (value as TriggerKind) : "none";
}
