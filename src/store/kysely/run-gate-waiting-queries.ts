import { ValidationError } from "../../domain/errors.js";
import { keyValueOf, type WaitingEvent } from "../../domain/run-gate.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";

type WaitingQueries = Pick<Store, "listWaiting">;

/** A line's events not admitted: waiting, or taken by a one-at-a-time line's chain as followers (until their runs are recorded). */
const WAITING_STATES = ["waiting", "following"] as const;

/**
 * The events waiting at a workflow's gate, listed in line order: by line
 * (gate_key, the shared line "" first) then arrival (position), the order
 * the run_gate_line index reads. A cursor is an event id: its line and
 * position are read from its run_gate row (kept while it waits or runs), so
 * the next page follows it even after it was admitted.
 */
export function runGateWaitingQueries({ db }: QueryContext): WaitingQueries {
  return {
    async listWaiting(ownerId, workflowId, page) {
      const cursorId = page.after ?? page.before;
      let cursor: { key: string; position: number } | null = null;
      if (cursorId) {
        const row = await db.selectFrom("run_gate").select(["gate_key", "position"]).where("workflow_id", "=", workflowId).where("owner_id", "=", ownerId).where("event_id", "=", cursorId).executeTakeFirst();
        if (!row) {
          const field = page.after ? "after" : "before";
          throw new ValidationError(field, `${field}: the event ${cursorId} is not at this workflow's gate any more (its run ended, or it was cancelled); list again from the first page.`);
        }
        cursor = { key: row.gate_key, position: Number(row.position) };
      }
      const backwards = Boolean(page.before);
      let query = db
        .selectFrom("run_gate as g")
        .select((eb) => [
          "g.event_id",
          "g.emitter_id",
          "g.gate_key",
          "g.created_at",
          // Its place in its line: the waiting ones up to it (a page is at most 100 such counts, each on the line's index).
          eb
            .selectFrom("run_gate as ahead")
            .select((inner) => inner.fn.countAll<number>().as("n"))
            .whereRef("ahead.workflow_id", "=", "g.workflow_id")
            .whereRef("ahead.gate_key", "=", "g.gate_key")
            .where("ahead.state", "in", WAITING_STATES)
            .whereRef("ahead.position", "<=", "g.position")
            .as("place"),
        ])
        .where("g.workflow_id", "=", workflowId)
        .where("g.owner_id", "=", ownerId)
        .where("g.state", "in", WAITING_STATES);
      if (cursor) {
        const op = backwards ? "<" : ">";
        const { key, position } = cursor;
        query = query.where((eb) => eb.or([eb("g.gate_key", op, key), eb.and([eb("g.gate_key", "=", key), eb("g.position", op, position)])]));
      }
      const order = backwards ? "desc" : "asc";
      const rows = await query.orderBy("g.gate_key", order).orderBy("g.position", order).limit(page.limit).execute();
      if (backwards) rows.reverse();
      const total = await db
        .selectFrom("run_gate")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("workflow_id", "=", workflowId)
        .where("owner_id", "=", ownerId)
        .where("state", "in", WAITING_STATES)
        .executeTakeFirst();
      const items: WaitingEvent[] = rows.map((row) => ({
        eventId: row.event_id,
        emitterId: row.emitter_id,
        key: keyValueOf(row.gate_key),
        position: Number(row.place),
        waitingSince: Number(row.created_at),
      }));
      return { items, totalCount: Number(total?.n ?? 0) };
    },
  };
}
