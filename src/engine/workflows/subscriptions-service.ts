import { NotFoundError, ValidationError } from "../../domain/errors.js";
import { newId } from "../../domain/ids.js";
import type { Subscription } from "../../domain/subscriptions.js";
import type { Store } from "../../store/store.js";

export interface SubscriptionKey {
  emitterId: string;
  listenerId: string;
  eventName: string;
}

/**
 * Subscriptions as the API makes them: an emitter (the caller's workflow or
 * source, or a glob `p_*` / `dc_*` of them) and a channel, to one of the
 * caller's listeners: a workflow (runs), a source (its `run` gets the
 * event) or a webhook (the event is POSTed). Another user's ids answer 404,
 * like missing ones.
 */
export class SubscriptionsService {
  constructor(private readonly options: { store: Store; now?: () => number }) {}

  async subscribe(ownerId: string, key: SubscriptionKey): Promise<Subscription> {
    await this.checkListener(ownerId, key.listenerId);
    await this.checkEmitter(ownerId, key.emitterId);
    // A source may listen to itself (the hosted service's scheduling components do); a workflow may not.
    if (key.emitterId === key.listenerId && !key.listenerId.startsWith("dc_")) throw new ValidationError("listener_id", "A workflow cannot listen to itself.");
    const at = (this.options.now ?? Date.now)();
    return this.options.store.subscribe({ id: newId("subscription", at), ownerId, ...key, createdAt: at });
  }

  async unsubscribe(ownerId: string, key: SubscriptionKey): Promise<void> {
    if (!(await this.options.store.unsubscribe(ownerId, key))) throw new NotFoundError("subscription", `${key.emitterId} → ${key.listenerId} (${key.eventName || "default channel"})`);
  }

  list(ownerId: string): Promise<Subscription[]> {
    return this.options.store.listSubscriptions(ownerId);
  }

  /** The listener gets this channel of every workflow and source, those made later included (a glob subscription to each kind). */
  async autoSubscribe(ownerId: string, listenerId: string, eventName: string): Promise<Subscription[]> {
    return [await this.subscribe(ownerId, { emitterId: "p_*", listenerId, eventName }), await this.subscribe(ownerId, { emitterId: "dc_*", listenerId, eventName })];
  }

  private async checkListener(ownerId: string, listenerId: string): Promise<void> {
    const { store } = this.options;
    if (listenerId.startsWith("p_")) {
      if (!(await store.findWorkflow(ownerId, listenerId))) throw new NotFoundError("workflow", listenerId);
    } else if (listenerId.startsWith("dc_")) {
      // By id only: a slug here would subscribe a name, not the source.
      const source = await store.findSource(ownerId, listenerId);
      if (!source || source.id !== listenerId) throw new NotFoundError("source", listenerId);
    } else if (listenerId.startsWith("wh_")) {
      if (!(await store.findWebhook(ownerId, listenerId))) throw new NotFoundError("webhook", listenerId);
    } else {
      throw new ValidationError("listener_id", `listener_id must be a workflow (p_…), a source (dc_…) or a webhook (wh_…); got "${listenerId}".`);
    }
  }

  private async checkEmitter(ownerId: string, emitterId: string): Promise<void> {
    if (emitterId === "p_*" || emitterId === "dc_*") return;
    if (emitterId.startsWith("p_")) {
      if (!(await this.options.store.findWorkflow(ownerId, emitterId))) throw new NotFoundError("workflow", emitterId);
      return;
    }
    if (emitterId.startsWith("dc_")) {
      if (!(await this.options.store.findSource(ownerId, emitterId))) throw new NotFoundError("source", emitterId);
      return;
    }
    throw new ValidationError("emitter_id", `emitter_id must be a workflow (p_…), a source (dc_…), or a glob p_* or dc_*; got "${emitterId}".`);
  }
}
