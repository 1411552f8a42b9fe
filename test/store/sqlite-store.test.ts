import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
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

const sqliteBackend = async () => {
  const dir = await mkdtemp(join(tmpdir(), "runnel-store-"));
  return {
    async open() {
      const store = createSqliteStore({ file: join(dir, "runnel.sqlite") });
      await store.migrate();
      return store;
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
};

describeStoreContract("sqlite", sqliteBackend);
describeSourceContract("sqlite", sqliteBackend);
describeWorkflowContract("sqlite", sqliteBackend);
describeAppAccountsContract("sqlite", sqliteBackend);
describeSendOutboxContract("sqlite", sqliteBackend);
describeRegistryContract("sqlite", sqliteBackend);
describeOutboxContract("sqlite", sqliteBackend);
describeActivityContract("sqlite", sqliteBackend);
describeSessionContract("sqlite", sqliteBackend);
describeProcessContract("sqlite", sqliteBackend);
describeHandOffContract("sqlite", sqliteBackend);
describeGateContract("sqlite", sqliteBackend);
