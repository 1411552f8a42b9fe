import type { Selectable } from "kysely";
import type { EnvVar } from "../../domain/env-vars.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import type { EnvVarRow } from "./schema.js";

type EnvVarQueries = Pick<Store, "putEnvVar" | "listEnvVars" | "findEnvVars" | "deleteEnvVar">;

/** Each user's environment variables, keyed by (owner, name). */
export function envVarQueries({ db }: QueryContext): EnvVarQueries {
  return {
    async putEnvVar(envVar) {
      const row = toRow(envVar);
      await db
        .insertInto("env_vars")
        .values(row)
        .onConflict((oc) => oc.columns(["owner_id", "name"]).doUpdateSet({ value: row.value, secret: row.secret, updated_at: row.updated_at }))
        .execute();
      const stored = await db.selectFrom("env_vars").selectAll().where("owner_id", "=", envVar.ownerId).where("name", "=", envVar.name).executeTakeFirstOrThrow();
      return toEnvVar(stored);
    },

    async listEnvVars(ownerId) {
      return (await db.selectFrom("env_vars").selectAll().where("owner_id", "=", ownerId).orderBy("name").execute()).map(toEnvVar);
    },

    async findEnvVars(ownerId, names) {
      if (names.length === 0) return [];
      return (await db.selectFrom("env_vars").selectAll().where("owner_id", "=", ownerId).where("name", "in", names).execute()).map(toEnvVar);
    },

    async deleteEnvVar(ownerId, name) {
      const deleted = await db.deleteFrom("env_vars").where("owner_id", "=", ownerId).where("name", "=", name).executeTakeFirst();
      return Number(deleted.numDeletedRows) > 0;
    },
  };
}

function toRow(envVar: EnvVar): EnvVarRow {
  return {
    owner_id: envVar.ownerId,
    name: envVar.name,
    value: envVar.value,
    secret: envVar.secret ? 1 : 0,
    created_at: envVar.createdAt,
    updated_at: envVar.updatedAt,
  };
}

function toEnvVar(row: Selectable<EnvVarRow>): EnvVar {
  return {
    ownerId: row.owner_id,
    name: row.name,
    value: row.value,
    secret: Number(row.secret) === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
