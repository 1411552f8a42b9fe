import { randomBytes } from "node:crypto";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { NotFoundError } from "../../domain/errors.js";
import { newId } from "../../domain/ids.js";
import type { PageRequest, PageSlice } from "../../domain/paging.js";
import type { Webhook, WebhookDelivery } from "../../domain/webhooks.js";
import type { Store } from "../../store/store.js";
import type { SecretBox } from "../secrets.js";
import { checkWebhookUrl, type ResolveAll } from "./webhook-url.js";

export interface WebhooksServiceOptions {
  store: Store;
  secrets: SecretBox;
  /** null: any URL (RUNNEL_SANDBOX_NETWORK=unrestricted). */
  egressPolicy: EgressPolicy | null;
  resolve?: ResolveAll;
  now?: () => number;
}

export interface NewWebhook {
  url: string;
  name?: string | null | undefined;
  description?: string | null | undefined;
}

/** Webhooks as the API makes them; another user's answer 404, like missing ones. */
export class WebhooksService {
  constructor(private readonly options: WebhooksServiceOptions) {}

  /** Creates a webhook; returns it with its signing secret in the clear, which is never shown again. */
  async create(ownerId: string, input: NewWebhook): Promise<{ webhook: Webhook; secret: string }> {
    const url = await checkWebhookUrl(input.url, this.options.egressPolicy, this.options.resolve);
    const at = (this.options.now ?? Date.now)();
    const secret = `whsec_${randomBytes(24).toString("base64url")}`;
    const webhook: Webhook = {
      id: newId("webhook", at),
      ownerId,
      name: input.name ?? null,
      description: input.description ?? null,
      url: url.toString(),
      secret: this.options.secrets.seal(secret),
      active: true,
      createdAt: at,
      updatedAt: at,
    };
    await this.options.store.createWebhook(webhook);
    return { webhook, secret };
  }

  async get(ownerId: string, webhookId: string): Promise<Webhook> {
    const webhook = await this.options.store.findWebhook(ownerId, webhookId);
    if (!webhook) throw new NotFoundError("webhook", webhookId);
    return webhook;
  }

  list(ownerId: string, page: PageRequest): Promise<PageSlice<Webhook>> {
    return this.options.store.listWebhooks(ownerId, page);
  }

  async remove(ownerId: string, webhookId: string): Promise<void> {
    if (!(await this.options.store.deleteWebhook(ownerId, webhookId))) throw new NotFoundError("webhook", webhookId);
  }

  async deliveries(ownerId: string, webhookId: string, page: PageRequest): Promise<PageSlice<WebhookDelivery>> {
    await this.get(ownerId, webhookId);
    return this.options.store.listWebhookDeliveries(ownerId, webhookId, page);
  }
}
