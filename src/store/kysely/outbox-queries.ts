import type { Selectable } from "kysely";
import { MAIL_KINDS, MAIL_STATUSES, type MailKind, type MailStatus, type OutboxEntry } from "../../domain/outbox.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { readIdPage } from "./id-paging.js";
import type { OutboxRow } from "./schema.js";

type OutboxQueries = Pick<Store, "addMail" | "markMail" | "listOutbox" | "claimDailyNotice">;

/** The outbox of mails, and the once-a-day claims of error notices. */
export function outboxQueries({ db }: QueryContext): OutboxQueries {
  return {
    async addMail(entry) {
      const inserted = await db
        .insertInto("outbox")
        .values({
          id: entry.id,
          owner_id: entry.ownerId,
          to_address: entry.to,
          subject: entry.subject,
          text_body: entry.text,
          html_body: entry.html,
          kind: entry.kind,
          workflow_id: entry.workflowId,
          status: entry.status,
          error: entry.error,
          created_at: entry.createdAt,
          sent_at: entry.sentAt,
        })
        // A mail recorded again under its id (a repeated attempt of a keyed send) is the one recorded first.
        .onConflict((oc) => oc.column("id").doNothing())
        .executeTakeFirst()
        .then((result) => Number(result.numInsertedOrUpdatedRows ?? 0n));
      if (inserted > 0) return { ...entry };
      const kept = await db.selectFrom("outbox").selectAll().where("id", "=", entry.id).where("owner_id", "=", entry.ownerId).executeTakeFirst();
      if (!kept) throw new Error(`mail id ${entry.id} is taken by another owner's mail`);
      return toOutboxEntry(kept);
    },

    async markMail(id, update) {
      await db
        .updateTable("outbox")
        .set({ status: update.status, error: update.error ?? null, sent_at: update.sentAt ?? null })
        .where("id", "=", id)
        .execute();
    },

    listOutbox(ownerId, page) {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("outbox").selectAll().where("owner_id", "=", ownerId);
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          return (await query.orderBy("id", order).limit(limit).execute()).map(toOutboxEntry);
        },
        async () => {
          const { count } = await db
            .selectFrom("outbox")
            .select((eb) => eb.fn.countAll<number>().as("count"))
            .where("owner_id", "=", ownerId)
            .executeTakeFirstOrThrow();
          return Number(count);
        },
      );
    },

    async claimDailyNotice(ownerId, workflowId, code, day) {
      // The primary key decides: of concurrent claims, one inserts and the others do nothing.
      const result = await db
        .insertInto("error_notices")
        .values({ owner_id: ownerId, workflow_id: workflowId, code, day, created_at: Date.now() })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    },
  };
}

function toOutboxEntry(row: Selectable<OutboxRow>): OutboxEntry {
  return {
    id: row.id,
    ownerId: row.owner_id,
    to: row.to_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    kind: (MAIL_KINDS as readonly string[]).includes(row.kind) ? (row.kind as MailKind) : "send-email",
    workflowId: row.workflow_id,
    status: (MAIL_STATUSES as readonly string[]).includes(row.status) ? (row.status as MailStatus) : "outbox",
    error: row.error,
    createdAt: Number(row.created_at),
    sentAt: row.sent_at === null ? null : Number(row.sent_at),
  };
}
