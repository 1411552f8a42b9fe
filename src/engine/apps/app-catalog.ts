import { checkAppInput, checkClientInput, type AppDefinition, type OAuthAppAuth } from "../../domain/apps.js";
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from "../../domain/errors.js";
import { SHIPPED_APPS } from "../../domain/shipped-apps.js";
import type { Store } from "../../store/store.js";
import type { SecretBox } from "../secrets.js";

/** An OAuth client as the engine uses it: the secret opened. */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

/** Where an app's OAuth client comes from: set through the API, the environment, or nowhere yet. */
export type ClientSource = "api" | "environment" | null;

export interface AppEntry {
  definition: AppDefinition;
  client: { clientId: string; source: Exclude<ClientSource, null> } | null;
}

export interface AppCatalogOptions {
  store: Store;
  secrets: SecretBox;
  /** RUNNEL_OAUTH_<SLUG>_CLIENT_ID / _CLIENT_SECRET, by <SLUG> (see config). */
  environmentClients?: Readonly<Record<string, OAuthClient>>;
  now?: () => number;
}

/** `my-crm` → `MY_CRM`, as the environment names it. */
export function environmentSlug(slug: string): string {
  return slug.toUpperCase().replace(/-/g, "_");
}

/**
 * The apps this server knows: the shipped ones (data in the code) and those
 * an admin added, each with its OAuth client when one is configured. The
 * client secret is sealed at rest and only opened for a token request.
 */
export class AppCatalog {
  private readonly now: () => number;

  constructor(private readonly options: AppCatalogOptions) {
    this.now = options.now ?? Date.now;
  }

  async list(): Promise<AppEntry[]> {
    const stored = await this.options.store.listStoredApps();
    const clients = new Map((await this.options.store.listOAuthClients()).map((client) => [client.app, client.clientId]));
    const all = [...SHIPPED_APPS, ...stored].sort((a, b) => a.slug.localeCompare(b.slug));
    return all.map((definition) => ({ definition, client: this.clientView(definition, clients.get(definition.slug)) }));
  }

  async get(slug: string): Promise<AppEntry> {
    const definition = await this.definition(slug);
    const stored = await this.options.store.findOAuthClient(slug);
    return { definition, client: this.clientView(definition, stored?.clientId) };
  }

  /** The app's definition; a NotFound naming where to look when there is none. */
  async definition(slug: string): Promise<AppDefinition> {
    const shipped = SHIPPED_APPS.find((app) => app.slug === slug);
    if (shipped) return shipped;
    const stored = (await this.options.store.listStoredApps()).find((app) => app.slug === slug);
    if (stored) return stored;
    const error = new NotFoundError("app", slug);
    error.message = `There is no app "${slug}" on this server. runnel apps list (GET /v1/apps) shows them; an admin can add one with POST /v1/apps.`;
    throw error;
  }

  /** POST /v1/apps: an admin's own app (an internal OAuth server, an API with keys). */
  async create(actor: { id: string; isAdmin: boolean }, body: unknown): Promise<AppEntry> {
    if (!actor.isAdmin) throw new ForbiddenError("Only an admin can add apps. Ask an admin of this server.");
    const input = checkAppInput(body);
    if (SHIPPED_APPS.some((app) => app.slug === input.definition.slug) || !(await this.options.store.createApp(input.definition, actor.id, this.now()))) {
      throw new ConflictError(`An app "${input.definition.slug}" exists already; pick another slug (GET /v1/apps lists them).`, { app: input.definition.slug });
    }
    if (input.client) await this.storeClient(input.definition.slug, input.client);
    return this.get(input.definition.slug);
  }

  /** PUT /v1/apps/<slug>/oauth_client: the admin's client id and secret for an OAuth app. */
  async setClient(actor: { isAdmin: boolean }, slug: string, body: unknown): Promise<AppEntry> {
    if (!actor.isAdmin) throw new ForbiddenError("Only an admin can configure an app's OAuth client. Ask an admin of this server.");
    const definition = await this.definition(slug);
    if (definition.auth.type !== "oauth") throw new ValidationError("app", `${definition.name} connects with ${definition.auth.type === "keys" ? "keys" : "no account"}, not OAuth: it has no OAuth client to configure.`);
    await this.storeClient(slug, checkClientInput(body));
    return this.get(slug);
  }

  /** The client to connect an OAuth app with, secret opened; set through the API, else the environment. */
  async clientFor(definition: AppDefinition & { auth: OAuthAppAuth }): Promise<OAuthClient> {
    const stored = await this.options.store.findOAuthClient(definition.slug);
    if (stored) return { clientId: stored.clientId, clientSecret: this.options.secrets.open(stored.sealedSecret) };
    const fromEnvironment = this.options.environmentClients?.[environmentSlug(definition.slug)];
    if (fromEnvironment) return fromEnvironment;
    const name = environmentSlug(definition.slug);
    throw new ConflictError(
      `${definition.name} has no OAuth client on this server yet, so no account can be connected. An admin sets one with PUT /v1/apps/${definition.slug}/oauth_client { client_id, client_secret } or RUNNEL_OAUTH_${name}_CLIENT_ID and RUNNEL_OAUTH_${name}_CLIENT_SECRET.`,
      { app: definition.slug },
    );
  }

  private async storeClient(slug: string, client: OAuthClient): Promise<void> {
    await this.options.store.putOAuthClient({ app: slug, clientId: client.clientId, sealedSecret: this.options.secrets.seal(client.clientSecret), updatedAt: this.now() });
  }

  private clientView(definition: AppDefinition, storedClientId: string | undefined): AppEntry["client"] {
    if (definition.auth.type !== "oauth") return null;
    if (storedClientId !== undefined) return { clientId: storedClientId, source: "api" };
    const fromEnvironment = this.options.environmentClients?.[environmentSlug(definition.slug)];
    return fromEnvironment ? { clientId: fromEnvironment.clientId, source: "environment" } : null;
  }
}
