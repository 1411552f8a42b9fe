import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, it } from "vitest";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describeActivityContract } from "./activity-contract.js";
import { describeRegistryContract } from "./registry-contract.js";
import { describeOutboxContract } from "./outbox-contract.js";
import { describeSourceContract } from "./source-contract.js";
import { describeWorkflowContract } from "./workflow-contract.js";
import { describeSendOutboxContract } from "./send-outbox-contract.js";
import { describeSessionContract } from "./session-contract.js";
import { describeStoreContract } from "./store-contract.js";
import { describeAppAccountsContract } from "./app-accounts-contract.js";
import { describeProcessContract } from "./process-contract.js";
import { describeHandOffContract } from "./handoff-contract.js";
import { describeGateContract } from "./gate-contract.js";

await requirePostgres();

/**
 * Schemas of this file's tests, migrated, emptied and kept for the next
 * test. Each test has a schema of its own while it runs, empty but for its
 * migrations, so parallel files never see each other's rows; emptying 40
 * tables (one TRUNCATE) costs a tenth of migrating a new schema and
 * dropping it (about 0.4 s of PostgreSQL's DDL for each of 84 tests).
 */
const emptiedSchemas: string[] = [];

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const postgresBackend = async () => {
  const schema = emptiedSchemas.pop() ?? `runnel_test_${randomBytes(6).toString("hex")}`;
  return {
    async open() {
      const store = createPostgresStore({ connectionString: TEST_DATABASE_URL, schema, maxConnections: 4 });
      await store.migrate();
      return store;
    },
    async dispose() {
      await withAdmin(async (client) => {
        const tables = await client.query<{ name: string }>(
          "SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'kysely\\_%'",
          [schema],
        );
        try {
          if (tables.rows.length > 0) await client.query(`TRUNCATE ${tables.rows.map((table) => `${schema}.${table.name}`).join(", ")} RESTART IDENTITY CASCADE`);
          emptiedSchemas.push(schema);
        } catch {
          // Not emptied (a test left it in a state TRUNCATE refuses): nobody else gets it.
          await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        }
      });
    },
  };
};
afterAll(() => withAdmin(async (client) => {
  for (const schema of emptiedSchemas.splice(0)) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}));

describeStoreContract("postgres", postgresBackend);
describeSourceContract("postgres", postgresBackend);
describeWorkflowContract("postgres", postgresBackend);
describeAppAccountsContract("postgres", postgresBackend);
describeSendOutboxContract("postgres", postgresBackend);
describeRegistryContract("postgres", postgresBackend);
describeOutboxContract("postgres", postgresBackend);
describeActivityContract("postgres", postgresBackend);
describeSessionContract("postgres", postgresBackend);
describeProcessContract("postgres", postgresBackend);
describeHandOffContract("postgres", postgresBackend);
describeGateContract("postgres", postgresBackend);

describe("PostgreSQL migrations beside other schemas", () => {
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };

  it("migrate in their own schema while others hold Kysely's tables or are dropped meanwhile", async () => {
    // A schema left with only Kysely's lock table (a test killed mid-migration): once, every migration failed on it.
    const leftover = `runnel_left_${randomBytes(6).toString("hex")}`;
    await admin(`CREATE SCHEMA ${leftover}; CREATE TABLE ${leftover}.kysely_migration_lock (id varchar(255) primary key, is_locked integer not null default 0)`);
    const schemas = Array.from({ length: 4 }, () => `runnel_test_${randomBytes(6).toString("hex")}`);
    // Meanwhile other schemas come and go, as other test files' do.
    let churning = true;
    const churn = (async () => {
      while (churning) {
        const passing = `runnel_churn_${randomBytes(6).toString("hex")}`;
        await admin(`CREATE SCHEMA ${passing}; CREATE TABLE ${passing}.t (id serial primary key)`);
        await admin(`DROP SCHEMA ${passing} CASCADE`);
      }
    })();
    try {
      await Promise.all(
        schemas.map(async (schema) => {
          const store = createPostgresStore({ connectionString: TEST_DATABASE_URL, schema, maxConnections: 2 });
          try {
            await store.migrate();
            await store.ping();
          } finally {
            await store.close();
          }
        }),
      );
    } finally {
      churning = false;
      await churn;
      for (const schema of [leftover, ...schemas]) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });
});
