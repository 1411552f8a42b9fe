import type { Kysely } from "kysely";
import type { StepStoreWrite } from "../../domain/data-stores.js";
import type { Store } from "../store.js";
import type { QueryContext } from "./context.js";
import type { Database } from "./schema.js";

/** Each workflow step's `$.service.db`: one row per key. */
export function stepStoreQueries({ db }: QueryContext): Pick<Store, "readStepStores"> {
  return {
    async readStepStores(ownerId, workflowId, stepIds) {
      const stores: Record<string, Record<string, unknown>> = {};
      for (const stepId of stepIds) stores[stepId] = {};
      if (stepIds.length === 0) return stores;
      const rows = await db
        .selectFrom("step_store_entries")
        .select(["step_id", "key", "value"])
        .where("owner_id", "=", ownerId)
        .where("workflow_id", "=", workflowId)
        .where("step_id", "in", stepIds)
        .execute();
      for (const row of rows) {
        const store = stores[row.step_id];
        if (store) store[row.key] = JSON.parse(row.value);
      }
      return stores;
    },
  };
}

/**
 * Applies the step-store changes of the runs recorded now, in the caller's
 * transaction, key by key (per-key last writer wins across concurrent runs).
 * A workflow deleted while its runs were in flight gets nothing written.
 */
export async function writeStepStores(trx: Kysely<Database>, writes: StepStoreWrite[], recorded: Set<string>): Promise<void> {
  const exists = new Map<string, boolean>();
  for (const write of writes) {
    if (!recorded.has(write.runId)) continue;
    const known = `${write.ownerId} ${write.workflowId}`;
    if (!exists.has(known)) {
      const row = await trx.selectFrom("workflows").select("id").where("id", "=", write.workflowId).where("owner_id", "=", write.ownerId).executeTakeFirst();
      exists.set(known, row !== undefined);
    }
    if (!exists.get(known)) continue;
    const scope = { owner_id: write.ownerId, workflow_id: write.workflowId, step_id: write.stepId };
    for (const [key, value] of Object.entries(write.set)) {
      const text = JSON.stringify(value);
      await trx
        .insertInto("step_store_entries")
        .values({ ...scope, key, value: text })
        .onConflict((oc) => oc.columns(["workflow_id", "step_id", "key"]).doUpdateSet({ value: text }))
        .execute();
    }
    if (write.removed.length > 0) {
      await trx
        .deleteFrom("step_store_entries")
        .where("owner_id", "=", write.ownerId)
        .where("workflow_id", "=", write.workflowId)
        .where("step_id", "=", write.stepId)
        .where("key", "in", write.removed)
        .execute();
    }
  }
}
