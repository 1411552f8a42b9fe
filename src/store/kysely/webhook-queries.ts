import type { Selectable } from "kysely";
import type { Webhook, WebhookDelivery, WebhookDeliveryStatus } from "../../domain/webhooks.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { readIdPage } from "./id-paging.js";
import type { WebhookDeliveryRow, WebhookRow } from "./schema.js";

type WebhookQueries = Pick<Store, "createWebhook" | "findWebhook" | "listWebhooks" | "deleteWebhook" | "recordWebhookAttempt" | "listWebhookDeliveries">;

/** Webhooks, and the record of what became of each event sent to one. */
export function webhookQueries({ db }: QueryContext): WebhookQueries {
  return {
    async createWebhook(webhook) {
      await db.insertInto("webhooks").values(toRow(webhook)).execute();
      return webhook;
    },

    async findWebhook(ownerId, webhookId) {
      const row = await db.selectFrom("webhooks").selectAll().where("id", "=", webhookId).where("owner_id", "=", ownerId).executeTakeFirst();
      return row ? toWebhook(row) : null;
    },

    listWebhooks(ownerId, page) {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("webhooks").selectAll().where("owner_id", "=", ownerId);
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          return (await query.orderBy("id", order).limit(limit).execute()).map(toWebhook);
        },
        async () => Number((await db.selectFrom("webhooks").select((eb) => eb.fn.countAll<number>().as("count")).where("owner_id", "=", ownerId).executeTakeFirstOrThrow()).count),
      );
    },

    deleteWebhook(ownerId, webhookId) {
      return db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom("webhooks").where("id", "=", webhookId).where("owner_id", "=", ownerId).executeTakeFirst();
        if (Number(deleted.numDeletedRows) === 0) return false;
        await trx.deleteFrom("subscriptions").where("owner_id", "=", ownerId).where("listener_id", "=", webhookId).execute();
        await trx.deleteFrom("deliveries").where("owner_id", "=", ownerId).where("listener_id", "=", webhookId).execute();
        await trx.deleteFrom("webhook_deliveries").where("owner_id", "=", ownerId).where("webhook_id", "=", webhookId).execute();
        return true;
      });
    },

    recordWebhookAttempt(record, retryAt) {
      return db.transaction().execute(async (trx) => {
        const row = toDeliveryRow(record);
        const { id: _kept, created_at: _first, ...update } = row;
        await trx
          .insertInto("webhook_deliveries")
          .values(row)
          .onConflict((oc) => oc.columns(["webhook_id", "emitter_id", "event_id"]).doUpdateSet(update))
          .execute();
        if (retryAt === null) {
          await trx.deleteFrom("deliveries").where("listener_id", "=", record.webhookId).where("emitter_id", "=", record.emitterId).where("event_id", "=", record.eventId).execute();
        } else {
          await trx
            .updateTable("deliveries")
            .set({ status: "pending", available_at: retryAt })
            .where("listener_id", "=", record.webhookId)
            .where("emitter_id", "=", record.emitterId)
            .where("event_id", "=", record.eventId)
            .execute();
        }
      });
    },

    async listWebhookDeliveries(ownerId, webhookId, page) {
      return readIdPage(
        page,
        async ({ cursor, order, limit }) => {
          let query = db.selectFrom("webhook_deliveries").selectAll().where("webhook_id", "=", webhookId).where("owner_id", "=", ownerId);
          if (cursor) query = query.where("id", cursor.op, cursor.id);
          return (await query.orderBy("id", order).limit(limit).execute()).map(toWebhookDelivery);
        },
        async () =>
          Number(
            (await db.selectFrom("webhook_deliveries").select((eb) => eb.fn.countAll<number>().as("count")).where("webhook_id", "=", webhookId).where("owner_id", "=", ownerId).executeTakeFirstOrThrow())
              .count,
          ),
      );
    },
  };
}

function toRow(webhook: Webhook): WebhookRow {
  return {
    id: webhook.id,
    owner_id: webhook.ownerId,
    name: webhook.name,
    description: webhook.description,
    url: webhook.url,
    secret: webhook.secret,
    active: webhook.active ? 1 : 0,
    created_at: webhook.createdAt,
    updated_at: webhook.updatedAt,
  };
}

function toWebhook(row: Selectable<WebhookRow>): Webhook {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    description: row.description,
    url: row.url,
    secret: row.secret,
    active: Number(row.active) === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toDeliveryRow(record: WebhookDelivery): WebhookDeliveryRow {
  return {
    id: record.id,
    owner_id: record.ownerId,
    webhook_id: record.webhookId,
    emitter_id: record.emitterId,
    event_id: record.eventId,
    channel: record.channel,
    status: record.status,
    attempts: record.attempts,
    last_status: record.lastStatus,
    last_error: record.lastError,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    delivered_at: record.deliveredAt,
  };
}

const STATUSES: readonly WebhookDeliveryStatus[] = ["retrying", "delivered", "failed"];

function toWebhookDelivery(row: Selectable<WebhookDeliveryRow>): WebhookDelivery {
  return {
    id: row.id,
    ownerId: row.owner_id,
    webhookId: row.webhook_id,
    emitterId: row.emitter_id,
    eventId: row.event_id,
    channel: row.channel,
    status: (STATUSES as readonly string[]).includes(row.status) ? (row.status as WebhookDeliveryStatus) : "retrying",
    attempts: Number(row.attempts),
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
  };
}
