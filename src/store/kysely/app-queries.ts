import { sql, type Selectable } from "kysely";
import type { AccountHealth, AppAccount, OAuthFlow } from "../../domain/app-accounts.js";
import type { AppAuth, AppDefinition } from "../../domain/apps.js";
import type { Store, StoredOAuthClient } from "../store.js";
import type { QueryContext } from "./context.js";
import { fromJson, toJson } from "./json-columns.js";
import type { AppAccountRow, OAuthClientRow, OAuthFlowRow } from "./schema.js";

type AppQueries = Pick<
  Store,
  | "listStoredApps"
  | "createApp"
  | "putOAuthClient"
  | "findOAuthClient"
  | "listOAuthClients"
  | "createAppAccount"
  | "findAppAccount"
  | "listAppAccounts"
  | "updateAppAccount"
  | "deleteAppAccount"
  | "findAppAccountRefresh"
  | "takeAccountRefreshLease"
  | "saveRefreshedAppAccount"
  | "releaseAccountRefreshLease"
  | "createOAuthFlow"
  | "findOAuthFlow"
  | "takeOAuthFlow"
>;

/** Apps added by an admin, OAuth clients, connected accounts and OAuth connections in progress. */
export function appQueries({ db, isUniqueViolation }: QueryContext): AppQueries {
  return {
    async listStoredApps() {
      const rows = await db.selectFrom("apps").selectAll().orderBy("slug").execute();
      return rows.map((row) => ({ slug: row.slug, name: row.name, auth: fromJson<AppAuth>(row.auth)!, shipped: false }));
    },

    async createApp(app: AppDefinition, createdBy, at) {
      try {
        await db.insertInto("apps").values({ slug: app.slug, name: app.name, auth: toJson(app.auth), created_by: createdBy, created_at: at, updated_at: at }).execute();
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    },

    async putOAuthClient(client) {
      const row = { app: client.app, client_id: client.clientId, client_secret: client.sealedSecret, updated_at: client.updatedAt };
      await db
        .insertInto("oauth_clients")
        .values(row)
        .onConflict((oc) => oc.column("app").doUpdateSet({ client_id: row.client_id, client_secret: row.client_secret, updated_at: row.updated_at }))
        .execute();
    },

    async findOAuthClient(app) {
      const row = await db.selectFrom("oauth_clients").selectAll().where("app", "=", app).executeTakeFirst();
      return row ? toClient(row) : null;
    },

    async listOAuthClients() {
      return (await db.selectFrom("oauth_clients").selectAll().orderBy("app").execute()).map(toClient);
    },

    async createAppAccount(account) {
      await db.insertInto("app_accounts").values(toAccountRow(account)).execute();
    },

    async findAppAccount(ownerId, accountId) {
      const row = await db.selectFrom("app_accounts").selectAll().where("owner_id", "=", ownerId).where("id", "=", accountId).executeTakeFirst();
      return row ? toAccount(row) : null;
    },

    async listAppAccounts(ownerId) {
      return (await db.selectFrom("app_accounts").selectAll().where("owner_id", "=", ownerId).orderBy("id").execute()).map(toAccount);
    },

    async updateAppAccount(account) {
      const row = toAccountRow(account);
      const updated = await db
        .updateTable("app_accounts")
        .set({ name: row.name, fields: row.fields, expires_at: row.expires_at, health: row.health, health_message: row.health_message, updated_at: row.updated_at })
        .where("owner_id", "=", account.ownerId)
        .where("id", "=", account.id)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) > 0;
    },

    async deleteAppAccount(ownerId, accountId) {
      const deleted = await db.deleteFrom("app_accounts").where("owner_id", "=", ownerId).where("id", "=", accountId).executeTakeFirst();
      return Number(deleted.numDeletedRows) > 0;
    },

    async findAppAccountRefresh(ownerId, accountId) {
      const row = await db.selectFrom("app_accounts").selectAll().where("owner_id", "=", ownerId).where("id", "=", accountId).executeTakeFirst();
      if (!row) return null;
      const lease = row.refreshing_by !== null && row.refreshing_until !== null ? { holder: row.refreshing_by, until: Number(row.refreshing_until) } : null;
      const lastFailure = row.refresh_error !== null && row.refresh_failed_at !== null ? { message: row.refresh_error, at: Number(row.refresh_failed_at) } : null;
      return { account: toAccount(row), lease, lastFailure };
    },

    async takeAccountRefreshLease(ownerId, accountId, holder, now, until) {
      const taken = await db
        .updateTable("app_accounts")
        .set({ refreshing_by: holder, refreshing_until: until, refresh_error: null, refresh_failed_at: null })
        .where("owner_id", "=", ownerId)
        .where("id", "=", accountId)
        .where((eb) => eb.or([eb("refreshing_until", "is", null), eb("refreshing_until", "<", now)]))
        .executeTakeFirst();
      return Number(taken.numUpdatedRows) > 0;
    },

    async saveRefreshedAppAccount(account, refreshedFrom, holder) {
      const row = toAccountRow(account);
      // The lease is ended only if still ours: one taken over meanwhile is its new holder's to end.
      const ours = sql<boolean>`refreshing_by = ${holder}`;
      const saved = await db
        .updateTable("app_accounts")
        .set({
          fields: row.fields,
          expires_at: row.expires_at,
          health: row.health,
          health_message: row.health_message,
          updated_at: row.updated_at,
          refreshing_by: sql<string | null>`CASE WHEN ${ours} THEN NULL ELSE refreshing_by END`,
          refreshing_until: sql<number | null>`CASE WHEN ${ours} THEN NULL ELSE refreshing_until END`,
          refresh_error: null,
          refresh_failed_at: null,
        })
        .where("owner_id", "=", account.ownerId)
        .where("id", "=", account.id)
        .where("fields", "=", refreshedFrom)
        .executeTakeFirst();
      return Number(saved.numUpdatedRows) > 0;
    },

    async releaseAccountRefreshLease(ownerId, accountId, holder, failure) {
      await db
        .updateTable("app_accounts")
        .set({ refreshing_by: null, refreshing_until: null, refresh_error: failure?.message ?? null, refresh_failed_at: failure?.at ?? null })
        .where("owner_id", "=", ownerId)
        .where("id", "=", accountId)
        .where("refreshing_by", "=", holder)
        .execute();
    },

    async createOAuthFlow(flow) {
      // Connections never finished go when a new one starts: the table holds only the last ten minutes' worth.
      await db.deleteFrom("oauth_flows").where("expires_at", "<", flow.createdAt).execute();
      await db
        .insertInto("oauth_flows")
        .values({
          state_hash: flow.stateHash,
          owner_id: flow.ownerId,
          app: flow.app,
          name: flow.name,
          account_id: flow.accountId,
          verifier: flow.sealedVerifier,
          expires_at: flow.expiresAt,
          created_at: flow.createdAt,
        })
        .execute();
    },

    async findOAuthFlow(stateHash, now) {
      const row = await db.selectFrom("oauth_flows").selectAll().where("state_hash", "=", stateHash).where("expires_at", ">=", now).executeTakeFirst();
      return row ? toFlow(row) : null;
    },

    async takeOAuthFlow(stateHash, now) {
      return db.transaction().execute(async (trx) => {
        // Abandoned connections go with any callback: nothing else reads them.
        await trx.deleteFrom("oauth_flows").where("expires_at", "<", now).execute();
        const row = await trx.selectFrom("oauth_flows").selectAll().where("state_hash", "=", stateHash).executeTakeFirst();
        if (!row) return null;
        // Deleted before it is used: a state works once, whoever comes second finds nothing.
        const deleted = await trx.deleteFrom("oauth_flows").where("state_hash", "=", stateHash).executeTakeFirst();
        return Number(deleted.numDeletedRows) > 0 ? toFlow(row) : null;
      });
    },
  };
}

function toClient(row: Selectable<OAuthClientRow>): StoredOAuthClient {
  return { app: row.app, clientId: row.client_id, sealedSecret: row.client_secret, updatedAt: Number(row.updated_at) };
}

function toAccountRow(account: AppAccount): Omit<AppAccountRow, "refreshing_by" | "refreshing_until" | "refresh_error" | "refresh_failed_at"> {
  return {
    id: account.id,
    owner_id: account.ownerId,
    app: account.app,
    name: account.name,
    fields: account.sealedFields,
    expires_at: account.expiresAt,
    health: account.health,
    health_message: account.healthMessage,
    created_at: account.createdAt,
    updated_at: account.updatedAt,
  };
}

function toAccount(row: Selectable<AppAccountRow>): AppAccount {
  return {
    id: row.id,
    ownerId: row.owner_id,
    app: row.app,
    name: row.name,
    sealedFields: row.fields,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    health: row.health as AccountHealth,
    healthMessage: row.health_message,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toFlow(row: Selectable<OAuthFlowRow>): OAuthFlow {
  return {
    stateHash: row.state_hash,
    ownerId: row.owner_id,
    app: row.app,
    name: row.name,
    accountId: row.account_id,
    sealedVerifier: row.verifier,
    expiresAt: Number(row.expires_at),
    createdAt: Number(row.created_at),
  };
}
