import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { describeStoreContract } from "./store-contract.js";

describeStoreContract("sqlite", async () => {
  const dir = await mkdtemp(join(tmpdir(), "runnel-store-"));
  return {
    async open() {
      const store = createSqliteStore({ file: join(dir, "runnel.sqlite") });
      await store.migrate();
      return store;
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
});
