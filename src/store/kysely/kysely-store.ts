import { sql, type Kysely } from "kysely";
import { KeyedMutex } from "../../domain/keyed-mutex.js";
import type { Store } from "../store.js";
import type { Database } from "./schema.js";
import { accountQueries } from "./account-queries.js";
import { activityQueries } from "./activity-queries.js";
import { secretQueries } from "./secret-queries.js";
import { componentQueries } from "./component-queries.js";
import type { QueryContext } from "./context.js";
import { eventQueries } from "./event-queries.js";
import { migrateToLatest, pendingMigrationNames } from "./migrate.js";
import { processQueries } from "./process-queries.js";
import { outboxQueries } from "./outbox-queries.js";
import { registryQueries } from "./registry-queries.js";
import { catalogQueries } from "./catalog-queries.js";
import { registryAppQueries } from "./registry-app-queries.js";
import { sourceQueries } from "./source-queries.js";
import { subscriptionQueries } from "./subscription-queries.js";
import { deliveryQueries } from "./delivery-queries.js";
import { sendOutboxQueries } from "./send-outbox-queries.js";
import { envVarQueries } from "./env-var-queries.js";
import { sessionQueries } from "./session-queries.js";
import { appQueries } from "./app-queries.js";
import { webhookQueries } from "./webhook-queries.js";
import { dataStoreQueries } from "./data-store-queries.js";
import { stepStoreQueries } from "./step-store-queries.js";
import { workflowQueries } from "./workflow-queries.js";
import { runRetryQueries } from "./run-retry-queries.js";
import { workflowVersionQueries } from "./workflow-version-queries.js";
import { runGateQueries } from "./run-gate-queries.js";
import { runGateWaitingQueries } from "./run-gate-waiting-queries.js";

export interface KyselyStoreOptions extends QueryContext {
  kind: Store["kind"];
}

/**
 * The Store written once over Kysely; the SQLite and PostgreSQL adapters differ
 * only in how they open the connection and name their errors.
 */
export function createKyselyStore(options: KyselyStoreOptions): Store {
  const { db } = options;
  const inProcess = new KeyedMutex();
  return {
    kind: options.kind,
    groupsWritesByTurn: false,
    migrate: () => migrateToLatest(db),
    pendingMigrations: () => pendingMigrationNames(db),
    async ping() {
      await db.selectFrom("users").select("id").limit(1).execute();
    },
    // SQLite: one process, so one at a time in it is one at a time in the installation.
    exclusively: options.kind === "postgres" ? (name, work) => underAdvisoryLock(db, name, work) : (name, work) => inProcess.run(name, work),
    close: () => db.destroy(),
    async purgeFreedSpace() {
      if (options.kind === "sqlite") {
        await sql`VACUUM`.execute(db);
        await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
      } else {
        await sql`VACUUM FULL workflows`.execute(db);
      }
    },
    ...accountQueries(options),
    ...activityQueries(options),
    ...componentQueries(options),
    ...sourceQueries(options),
    ...eventQueries(options),
    ...subscriptionQueries(options),
    ...workflowQueries(options),
    ...runRetryQueries(options),
    ...workflowVersionQueries(options),
    ...runGateQueries(options),
    ...runGateWaitingQueries(options),
    ...deliveryQueries(options),
    ...sendOutboxQueries(options),
    ...registryQueries(options),
    ...catalogQueries(options),
    ...registryAppQueries(options),
    ...outboxQueries(options),
    ...secretQueries(options),
    ...webhookQueries(options),
    ...dataStoreQueries(options),
    ...stepStoreQueries(options),
    ...envVarQueries(options),
    ...sessionQueries(options),
    ...appQueries(options),
    ...processQueries(options),
  };
}

/**
 * `work` under a session advisory lock named after the schema and `name`,
 * taken on a connection held for the work's time (the work's own queries
 * use others): another process asking for it waits until it is released.
 */
async function underAdvisoryLock<T>(db: Kysely<Database>, name: string, work: () => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(hashtext(current_schema() || ':' || ${name}))`.execute(connection);
    try {
      return await work();
    } finally {
      await sql`SELECT pg_advisory_unlock(hashtext(current_schema() || ':' || ${name}))`.execute(connection);
    }
  });
}
