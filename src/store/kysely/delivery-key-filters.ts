import type { DeliveryKey } from "../../domain/subscriptions.js";

/** A filter matching any of `keys`' delivery rows. */
export function anyOfKeys(eb: any, keys: DeliveryKey[]) {
  return eb.or(keys.map((key) => keyFilter(key)[0](eb)));
}

export function keyFilter(key: DeliveryKey) {
  return [
    (eb: any) => eb.and([eb("listener_id", "=", key.listenerId), eb("emitter_id", "=", key.emitterId), eb("event_id", "=", key.eventId)]),
  ] as const;
}
