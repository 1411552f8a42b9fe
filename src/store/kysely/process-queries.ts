import { sql } from "kysely";
import type { ProcessRecord, ProcessRole } from "../../domain/processes.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import type { ProcessRow } from "./schema.js";

type ProcessQueries = Pick<Store, "recordProcess" | "removeProcess" | "listProcesses" | "deliveryQueueStats">;

/** The process registry and the delivery queue's figures, for status pages and metrics. */
export function processQueries({ db }: QueryContext): ProcessQueries {
  return {
    async recordProcess(record) {
      const row = toRow(record);
      const { instance_id: _key, ...changes } = row;
      await db
        .insertInto("processes")
        .values(row)
        .onConflict((oc) => oc.column("instance_id").doUpdateSet(changes))
        .execute();
    },

    async removeProcess(instanceId) {
      await db.deleteFrom("processes").where("instance_id", "=", instanceId).execute();
    },

    async listProcesses() {
      const rows = await db.selectFrom("processes").selectAll().orderBy("started_at").orderBy("instance_id").execute();
      return rows.map(toRecord);
    },

    async deliveryQueueStats(now) {
      // One pass over the (status, available_at) index: cheap enough for every scrape.
      const row = await db
        .selectFrom("deliveries")
        .select([
          sql<number>`SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END)`.as("waiting"),
          sql<number>`SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END)`.as("running"),
          sql<number | null>`MIN(CASE WHEN status = 'pending' THEN created_at END)`.as("oldest"),
        ])
        .executeTakeFirst();
      const oldest = row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest);
      return {
        waiting: Number(row?.waiting ?? 0),
        running: Number(row?.running ?? 0),
        oldestWaitMs: oldest === null ? 0 : Math.max(0, now - oldest),
      };
    },
  };
}

function toRow(record: ProcessRecord): ProcessRow {
  return {
    instance_id: record.instanceId,
    role: record.role,
    version: record.version,
    host: record.host,
    pid: record.pid,
    url: record.url,
    started_at: record.startedAt,
    heartbeat_at: record.heartbeatAt,
    heartbeat_interval_ms: record.heartbeatIntervalMs,
    busy_runners: record.busyRunners,
    queued_deliveries: record.queuedDeliveries,
  };
}

function toRecord(row: ProcessRow): ProcessRecord {
  return {
    instanceId: row.instance_id,
    role: row.role as ProcessRole,
    version: row.version,
    host: row.host,
    pid: Number(row.pid),
    url: row.url,
    startedAt: Number(row.started_at),
    heartbeatAt: Number(row.heartbeat_at),
    heartbeatIntervalMs: Number(row.heartbeat_interval_ms),
    busyRunners: Number(row.busy_runners),
    queuedDeliveries: Number(row.queued_deliveries),
  };
}
