import type { Selectable } from "kysely";
import type { Delivery, Subscription } from "../../domain/subscriptions.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import type { DeliveryRow, SubscriptionRow } from "./schema.js";

type SubscriptionQueries = Pick<Store, "subscribe" | "unsubscribe" | "listSubscriptions" | "pendingDeliveries">;

/** Subscriptions, and the deliveries recorded for them. */
export function subscriptionQueries({ db, isUniqueViolation }: QueryContext): SubscriptionQueries {
  const findExisting = (ownerId: string, key: { emitterId: string; listenerId: string; eventName: string }) =>
    db
      .selectFrom("subscriptions")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .where("emitter_id", "=", key.emitterId)
      .where("listener_id", "=", key.listenerId)
      .where("event_name", "=", key.eventName)
      .executeTakeFirst();

  return {
    async subscribe(subscription) {
      const existing = await findExisting(subscription.ownerId, subscription);
      if (existing) return toSubscription(existing);
      try {
        await db
          .insertInto("subscriptions")
          .values({
            id: subscription.id,
            owner_id: subscription.ownerId,
            emitter_id: subscription.emitterId,
            listener_id: subscription.listenerId,
            event_name: subscription.eventName,
            created_at: subscription.createdAt,
          })
          .execute();
        return subscription;
      } catch (error) {
        // Created by a concurrent request between the look and the insert: that one stands.
        const raced = isUniqueViolation(error) ? await findExisting(subscription.ownerId, subscription) : undefined;
        if (raced) return toSubscription(raced);
        throw error;
      }
    },

    async unsubscribe(ownerId, key) {
      const result = await db
        .deleteFrom("subscriptions")
        .where("owner_id", "=", ownerId)
        .where("emitter_id", "=", key.emitterId)
        .where("listener_id", "=", key.listenerId)
        .where("event_name", "=", key.eventName)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async listSubscriptions(ownerId) {
      const rows = await db.selectFrom("subscriptions").selectAll().where("owner_id", "=", ownerId).orderBy("id", "asc").execute();
      return rows.map(toSubscription);
    },

    async pendingDeliveries(listenerId, limit) {
      const rows = await db
        .selectFrom("deliveries")
        .selectAll()
        .where("listener_id", "=", listenerId)
        .where("status", "=", "pending")
        .orderBy("created_at", "asc")
        .orderBy("event_id", "asc")
        .limit(limit)
        .execute();
      return rows.map(toDelivery);
    },
  };
}

function toSubscription(row: Selectable<SubscriptionRow>): Subscription {
  return {
    id: row.id,
    ownerId: row.owner_id,
    emitterId: row.emitter_id,
    listenerId: row.listener_id,
    eventName: row.event_name,
    createdAt: Number(row.created_at),
  };
}

export function toDelivery(row: Selectable<DeliveryRow>): Delivery {
  const status = row.status === "running" || row.status === "done" || row.status === "failed" ? row.status : "pending";
  return {
    listenerId: row.listener_id,
    emitterId: row.emitter_id,
    eventId: row.event_id,
    ownerId: row.owner_id,
    subscriptionId: row.subscription_id,
    channel: row.channel,
    status,
    attempts: Number(row.attempts),
    interruptions: Number(row.interruptions ?? 0),
    availableAt: Number(row.available_at),
    createdAt: Number(row.created_at),
  };
}
