import type { Selectable } from "kysely";
import { ConflictError } from "../../domain/errors.js";
import type { DeployedSource, SourceLimits, TimerSchedule } from "../../domain/sources.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { readIdPage } from "./id-paging.js";
import { fromJson, toJson } from "./json-columns.js";
import type { SourceRow } from "./schema.js";

type SourceQueries = Pick<
  Store,
  | "createSource"
  | "findSource"
  | "findSourceByEndpoint"
  | "listSources"
  | "takenSlugs"
  | "updateSource"
  | "deleteSource"
  | "readSourceDb"
  | "timerTickRecorded"
  | "dueTimers"
  | "nextTimerDueAt"
  | "claimTick"
>;

/** Deployed sources, their key-value store and their timer ticks. */
export function sourceQueries({ db, isUniqueViolation }: QueryContext): SourceQueries {
  const slugTaken = (error: unknown, slug: string) =>
    isUniqueViolation(error) ? new ConflictError(`You already have a source named "${slug}". Choose another name.`, { field: "name" }) : error;

  return {
    async createSource(source, state) {
      try {
        await db.insertInto("sources").values({ ...toRow(source), db_state: toJson(state) }).execute();
      } catch (error) {
        throw slugTaken(error, source.nameSlug);
      }
      return source;
    },

    async findSource(ownerId, idOrSlug) {
      const row = await db
        .selectFrom("sources")
        .selectAll()
        .where("owner_id", "=", ownerId)
        .where((eb) => eb.or([eb("id", "=", idOrSlug), eb("name_slug", "=", idOrSlug)]))
        .executeTakeFirst();
      return row ? toSource(row) : null;
    },

    async findSourceByEndpoint(token) {
      const row = await db.selectFrom("sources").selectAll().where("endpoint_token", "=", token).executeTakeFirst();
      return row ? toSource(row) : null;
    },

    listSources(ownerId, page) {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("sources").selectAll().where("owner_id", "=", ownerId);
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          return (await query.orderBy("id", order).limit(limit).execute()).map(toSource);
        },
        async () => {
          const { count } = await db
            .selectFrom("sources")
            .select((eb) => eb.fn.countAll<number>().as("count"))
            .where("owner_id", "=", ownerId)
            .executeTakeFirstOrThrow();
          return Number(count);
        },
      );
    },

    // Slugs hold only [a-z0-9-], so `base` has no LIKE wildcards to escape.
    async takenSlugs(ownerId, base) {
      const rows = await db
        .selectFrom("sources")
        .select("name_slug")
        .where("owner_id", "=", ownerId)
        .where((eb) => eb.or([eb("name_slug", "=", base), eb("name_slug", "like", `${base}-%`)]))
        .execute();
      return new Set(rows.map((row) => row.name_slug));
    },

    async updateSource(source, state) {
      const { id, owner_id, created_at, ...fields } = toRow(source);
      try {
        await db
          .updateTable("sources")
          .set(state === undefined ? fields : { ...fields, db_state: toJson(state) })
          .where("id", "=", id)
          .where("owner_id", "=", owner_id)
          .execute();
      } catch (error) {
        throw slugTaken(error, source.nameSlug);
      }
    },

    async deleteSource(ownerId, sourceId) {
      return db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom("sources").where("id", "=", sourceId).where("owner_id", "=", ownerId).executeTakeFirst();
        if (Number(deleted.numDeletedRows) === 0) return false;
        await trx.deleteFrom("events").where("emitter_id", "=", sourceId).execute();
        await trx.deleteFrom("logs").where("emitter_id", "=", sourceId).execute();
        await trx.deleteFrom("emitter_state").where("emitter_id", "=", sourceId).execute();
        await trx.deleteFrom("timer_tick_runs").where("source_id", "=", sourceId).execute();
        // As emitter and as listener (a source subscribed to events, its own included).
        await trx.deleteFrom("subscriptions").where("owner_id", "=", ownerId).where((eb) => eb.or([eb("emitter_id", "=", sourceId), eb("listener_id", "=", sourceId)])).execute();
        await trx.deleteFrom("deliveries").where("owner_id", "=", ownerId).where((eb) => eb.or([eb("emitter_id", "=", sourceId), eb("listener_id", "=", sourceId)])).execute();
        return true;
      });
    },

    async readSourceDb(ownerId, sourceId) {
      const row = await db.selectFrom("sources").select("db_state").where("id", "=", sourceId).where("owner_id", "=", ownerId).executeTakeFirst();
      return row ? fromJson<Record<string, unknown>>(row.db_state) : {};
    },

    async timerTickRecorded(sourceId, dueAtMs) {
      const row = await db.selectFrom("timer_tick_runs").select("source_id").where("source_id", "=", sourceId).where("due_at_ms", "=", dueAtMs).executeTakeFirst();
      return row !== undefined;
    },

    async dueTimers(now, limit) {
      const rows = await db
        .selectFrom("sources")
        .select(["id", "owner_id", "next_tick_at"])
        .where("active", "=", 1)
        .where("next_tick_at", "is not", null)
        .where("next_tick_at", "<=", now)
        .orderBy("next_tick_at", "asc")
        .limit(limit)
        .execute();
      return rows.map((row) => ({ id: row.id, ownerId: row.owner_id, nextTickAt: Number(row.next_tick_at) }));
    },

    async nextTimerDueAt() {
      const row = await db
        .selectFrom("sources")
        .select((eb) => eb.fn.min("next_tick_at").as("due"))
        .where("active", "=", 1)
        .where("next_tick_at", "is not", null)
        .executeTakeFirst();
      return row?.due === null || row?.due === undefined ? null : Number(row.due);
    },

    async claimTick(sourceId, dueAt, nextAt) {
      const result = await db
        .updateTable("sources")
        .set({ next_tick_at: nextAt })
        .where("id", "=", sourceId)
        .where("next_tick_at", "=", dueAt)
        .where("active", "=", 1)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}

function toRow(source: DeployedSource): Omit<SourceRow, "db_state"> {
  return {
    id: source.id,
    owner_id: source.ownerId,
    component_id: source.componentId,
    name: source.name,
    name_slug: source.nameSlug,
    configured_props: toJson(source.configuredProps),
    active: source.active ? 1 : 0,
    endpoint_token: source.endpointToken,
    timer: source.timer ? toJson(source.timer) : null,
    next_tick_at: source.nextTickAt,
    retention: source.retention,
    limits: source.limits ? toJson(source.limits) : null,
    created_at: source.createdAt,
    updated_at: source.updatedAt,
  };
}

function toSource(row: Selectable<SourceRow>): DeployedSource {
  return {
    id: row.id,
    ownerId: row.owner_id,
    componentId: row.component_id,
    name: row.name,
    nameSlug: row.name_slug,
    configuredProps: fromJson<Record<string, unknown>>(row.configured_props),
    active: Number(row.active) === 1,
    endpointToken: row.endpoint_token,
    timer: row.timer === null ? null : fromJson<TimerSchedule>(row.timer),
    nextTickAt: row.next_tick_at === null ? null : Number(row.next_tick_at),
    retention: Number(row.retention),
    limits: row.limits === null ? null : fromJson<SourceLimits>(row.limits),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
