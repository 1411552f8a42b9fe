import { randomBytes } from "node:crypto";
import pg from "pg";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describeRegistryContract } from "./registry-contract.js";
import { describeOutboxContract } from "./outbox-contract.js";
import { describeSourceContract } from "./source-contract.js";
import { describeWorkflowContract } from "./workflow-contract.js";
import { describeSendOutboxContract } from "./send-outbox-contract.js";
import { describeStoreContract } from "./store-contract.js";

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
describeSendOutboxContract("postgres", postgresBackend);
describeRegistryContract("postgres", postgresBackend);
describeOutboxContract("postgres", postgresBackend);
