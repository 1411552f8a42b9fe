import { sql } from "kysely";
import { FAILING_WORKFLOWS_LIMIT, type EmitterEventStats, type MinuteCounts, type WorkflowRunStats } from "../../domain/activity.js";
import { idBoundAt } from "../../domain/ids.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";

type ActivityQueries = Pick<Store, "eventStats" | "runStats" | "activity">;

/**
 * Counts for lists and the home page. Each is one grouped query over an
 * index: events by their primary key (emitter_id, ms, seq), runs by
 * runs_workflow (workflow_id, id) or the primary key, since a run's id sorts
 * by its start time.
 */
export function activityQueries({ db }: QueryContext): ActivityQueries {
  return {
    async eventStats(ownerId, emitterIds) {
      const stats = new Map<string, EmitterEventStats>();
      if (emitterIds.length === 0) return stats;
      const rows = await db
        .selectFrom("events")
        .select((eb) => ["emitter_id", eb.fn.countAll<number | string>().as("count"), eb.fn.max("ms").as("last_ms")])
        .where("owner_id", "=", ownerId)
        .where("emitter_id", "in", emitterIds)
        .groupBy("emitter_id")
        .execute();
      for (const row of rows) stats.set(row.emitter_id, { count: Number(row.count), lastMs: row.last_ms === null ? null : Number(row.last_ms) });
      return stats;
    },

    async runStats(ownerId, workflowIds, since) {
      const stats = new Map<string, WorkflowRunStats>();
      if (workflowIds.length === 0) return stats;
      const recent = await db
        .selectFrom("runs")
        .select((eb) => [
          "workflow_id",
          eb.fn.countAll<number | string>().as("runs"),
          eb.fn.sum<number | string>(sql`CASE WHEN status = 'error' THEN 1 ELSE 0 END`).as("errors"),
        ])
        .where("owner_id", "=", ownerId)
        .where("workflow_id", "in", workflowIds)
        .where("id", ">=", idBoundAt("run", since))
        .groupBy("workflow_id")
        .execute();
      // The newest run of each: the greatest id per workflow is read from the index alone, then its row by primary key.
      const newest = await db
        .selectFrom("runs")
        .select(["workflow_id", "started_at"])
        .where("owner_id", "=", ownerId)
        .where("id", "in", (eb) => eb.selectFrom("runs").select((inner) => inner.fn.max("id").as("id")).where("workflow_id", "in", workflowIds).groupBy("workflow_id"))
        .execute();
      for (const row of newest) stats.set(row.workflow_id, { lastRunAt: Number(row.started_at), runs: 0, errors: 0 });
      for (const row of recent) {
        const known = stats.get(row.workflow_id) ?? { lastRunAt: null, runs: 0, errors: 0 };
        stats.set(row.workflow_id, { ...known, runs: Number(row.runs), errors: Number(row.errors ?? 0) });
      }
      return stats;
    },

    async activity(ownerId, since) {
      const bound = idBoundAt("run", since);
      const runs = await db
        .selectFrom("runs")
        .select((eb) => [
          sql<number | string>`started_at / 60000`.as("minute"),
          eb.fn.countAll<number | string>().as("runs"),
          eb.fn.sum<number | string>(sql`CASE WHEN status = 'error' THEN 1 ELSE 0 END`).as("errors"),
        ])
        .where("owner_id", "=", ownerId)
        // By the owner's workflows: runs_workflow (workflow_id, id) reads only their runs of the window, not everyone's.
        .where("workflow_id", "in", (eb) => eb.selectFrom("workflows").select("id").where("owner_id", "=", ownerId))
        .where("id", ">=", bound)
        .where("started_at", ">=", since)
        .groupBy(sql`started_at / 60000`)
        .execute();
      // Sources' events (what they emitted; not the `$logs` lines some listeners ask for).
      const events = await db
        .selectFrom("events")
        .select((eb) => [sql<number | string>`ms / 60000`.as("minute"), eb.fn.countAll<number | string>().as("events")])
        .where("owner_id", "=", ownerId)
        .where("emitter_id", "in", (eb) => eb.selectFrom("sources").select("id").where("owner_id", "=", ownerId))
        .where("ms", ">=", since)
        .where("channel", "<>", "$logs")
        .groupBy(sql`ms / 60000`)
        .execute();
      const failing = await db
        .selectFrom("runs")
        .innerJoin("workflows", "workflows.id", "runs.workflow_id")
        .select((eb) => [
          "runs.workflow_id as id",
          "workflows.name as name",
          eb.fn.countAll<number | string>().as("errors"),
          eb.fn.max("runs.finished_at").as("last_error_at"),
        ])
        .where("runs.owner_id", "=", ownerId)
        .where("workflows.owner_id", "=", ownerId)
        .where("runs.workflow_id", "in", (eb) => eb.selectFrom("workflows").select("id").where("owner_id", "=", ownerId))
        .where("runs.id", ">=", bound)
        .where("runs.started_at", ">=", since)
        .where("runs.status", "=", "error")
        .groupBy(["runs.workflow_id", "workflows.name"])
        .orderBy("errors", "desc")
        .orderBy("last_error_at", "desc")
        .limit(FAILING_WORKFLOWS_LIMIT)
        .execute();

      const minutes = new Map<number, MinuteCounts>();
      const at = (minute: number) => minutes.get(minute) ?? minutes.set(minute, { minute, runs: 0, events: 0, errors: 0 }).get(minute)!;
      for (const row of runs) Object.assign(at(Number(row.minute)), { runs: Number(row.runs), errors: Number(row.errors ?? 0) });
      for (const row of events) at(Number(row.minute)).events = Number(row.events);
      return {
        minutes: [...minutes.values()],
        failing: failing.map((row) => ({ id: row.id, name: row.name, errors: Number(row.errors), lastErrorAt: Number(row.last_error_at) })),
      };
    },
  };
}
