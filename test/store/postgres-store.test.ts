import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, it } from "vitest";
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

const postgresBackend = async () => {
  // Each test gets a schema of its own, so parallel runs never see each other's rows.
  const schema = `runnel_test_${randomBytes(6).toString("hex")}`;
  return {
    async open() {
      const store = createPostgresStore({ connectionString: TEST_DATABASE_URL, schema, maxConnections: 4 });
      await store.migrate();
      return store;
    },
    async dispose() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
};

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
