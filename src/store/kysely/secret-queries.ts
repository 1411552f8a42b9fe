import type { WorkflowStep } from "../../domain/workflows.js";
import type { ResealCounts, Store } from "../store.js";
import type { QueryContext } from "./context.js";
import { fromJson, toJson } from "./json-columns.js";

type SecretQueries = Pick<Store, "resealSecrets" | "anySealedValue" | "listAllWorkflowSteps">;

/** Every string value of a props object that `reseal` replaces, replaced; the count of them. */
function resealProps(props: Record<string, unknown>, reseal: (value: string) => string | null): number {
  let count = 0;
  for (const [name, value] of Object.entries(props)) {
    if (typeof value !== "string") continue;
    const replaced = reseal(value);
    if (replaced === null) continue;
    props[name] = replaced;
    count += 1;
  }
  return count;
}

/**
 * Sealed values wherever they are kept (sources' configured props, workflow
 * steps' props, secret environment variables, webhooks' signing secrets,
 * connected accounts' fields, OAuth clients' secrets and PKCE verifiers), for the master key's rotation:
 * all re-sealed in one transaction, so no value is ever left under a key
 * that is gone. A table that holds sealed values and is missing here would
 * be unreadable after a rotation (a webhook could no longer sign).
 */
export function secretQueries({ db }: QueryContext): SecretQueries {
  return {
    resealSecrets(reseal) {
      return db.transaction().execute(async (trx) => {
        const counts: ResealCounts = { sources: 0, workflows: 0, envVars: 0, webhooks: 0, appAccounts: 0, oauthClients: 0, values: 0 };
        for (const row of await trx.selectFrom("sources").select(["id", "configured_props"]).execute()) {
          const props = fromJson<Record<string, unknown>>(row.configured_props) ?? {};
          const resealed = resealProps(props, reseal);
          if (resealed === 0) continue;
          await trx.updateTable("sources").set({ configured_props: toJson(props) }).where("id", "=", row.id).execute();
          counts.sources += 1;
          counts.values += resealed;
        }
        for (const row of await trx.selectFrom("workflows").select(["id", "steps"]).execute()) {
          const steps = fromJson<Array<{ props?: Record<string, unknown> }>>(row.steps) ?? [];
          let resealed = 0;
          for (const step of steps) if (step.props) resealed += resealProps(step.props, reseal);
          if (resealed === 0) continue;
          await trx.updateTable("workflows").set({ steps: toJson(steps) }).where("id", "=", row.id).execute();
          counts.workflows += 1;
          counts.values += resealed;
        }
        for (const row of await trx.selectFrom("env_vars").select(["owner_id", "name", "value"]).where("secret", "=", 1).execute()) {
          const resealed = reseal(row.value);
          if (resealed === null) continue;
          await trx.updateTable("env_vars").set({ value: resealed }).where("owner_id", "=", row.owner_id).where("name", "=", row.name).execute();
          counts.envVars += 1;
          counts.values += 1;
        }
        for (const row of await trx.selectFrom("webhooks").select(["id", "secret"]).execute()) {
          const resealed = reseal(row.secret);
          if (resealed === null) continue;
          await trx.updateTable("webhooks").set({ secret: resealed }).where("id", "=", row.id).execute();
          counts.webhooks += 1;
          counts.values += 1;
        }
        for (const row of await trx.selectFrom("app_accounts").select(["id", "fields"]).execute()) {
          const resealed = reseal(row.fields);
          if (resealed === null) continue;
          await trx.updateTable("app_accounts").set({ fields: resealed }).where("id", "=", row.id).execute();
          counts.appAccounts += 1;
          counts.values += 1;
        }
        for (const row of await trx.selectFrom("oauth_clients").select(["app", "client_secret"]).execute()) {
          const resealed = reseal(row.client_secret);
          if (resealed === null) continue;
          await trx.updateTable("oauth_clients").set({ client_secret: resealed }).where("app", "=", row.app).execute();
          counts.oauthClients += 1;
          counts.values += 1;
        }
        // Connections in progress hold a sealed PKCE verifier: re-sealed too, or a callback during the rotation's window would fail.
        for (const row of await trx.selectFrom("oauth_flows").select(["state_hash", "verifier"]).execute()) {
          const resealed = reseal(row.verifier);
          if (resealed === null) continue;
          await trx.updateTable("oauth_flows").set({ verifier: resealed }).where("state_hash", "=", row.state_hash).execute();
          counts.values += 1;
        }
        return counts;
      });
    },

    async listAllWorkflowSteps() {
      const rows = await db.selectFrom("workflows").select(["id", "owner_id", "steps"]).execute();
      return rows.map((row) => ({ id: row.id, ownerId: row.owner_id, steps: fromJson<WorkflowStep[]>(row.steps) ?? [] }));
    },

    async anySealedValue(isSealed) {
      for (const row of await db.selectFrom("sources").select("configured_props").execute()) {
        const found = Object.values(fromJson<Record<string, unknown>>(row.configured_props) ?? {}).find((value) => typeof value === "string" && isSealed(value));
        if (found !== undefined) return found as string;
      }
      for (const row of await db.selectFrom("workflows").select("steps").execute()) {
        for (const step of fromJson<Array<{ props?: Record<string, unknown> }>>(row.steps) ?? []) {
          const found = Object.values(step.props ?? {}).find((value) => typeof value === "string" && isSealed(value));
          if (found !== undefined) return found as string;
        }
      }
      // A data folder whose only secrets are environment variables or webhooks' still tells which key is in force.
      const envVar = await db.selectFrom("env_vars").select("value").where("secret", "=", 1).limit(1).executeTakeFirst();
      if (envVar && isSealed(envVar.value)) return envVar.value;
      const webhook = await db.selectFrom("webhooks").select("secret").limit(1).executeTakeFirst();
      if (webhook && isSealed(webhook.secret)) return webhook.secret;
      const account = await db.selectFrom("app_accounts").select("fields").limit(1).executeTakeFirst();
      if (account && isSealed(account.fields)) return account.fields;
      const client = await db.selectFrom("oauth_clients").select("client_secret").limit(1).executeTakeFirst();
      if (client && isSealed(client.client_secret)) return client.client_secret;
      return null;
    },
  };
}
