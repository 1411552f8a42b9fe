import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteDatabaseClass as SqliteDatabase } from "../../src/store/sqlite/sqlite-binding.js";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

/**
 * The server's connection never checkpoints the log itself (wal_autocheckpoint
 * is 0); a thread of the store's does. What is written reaches the main file
 * while the store stays open, the log does not grow with what is written, and
 * what was committed is there when the file is opened again.
 */
describe("the SQLite store's checkpoint thread", () => {
  let dir: string;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("moves committed pages into the main file off the server's thread, keeps the log small, and loses nothing", async () => {
    dir = await mkdtemp(join(tmpdir(), "runnel-wal-"));
    const file = join(dir, "runnel.sqlite");
    store = createSqliteStore({ file });
    await store.migrate();
    const mainBefore = (await stat(file)).size;
    // About 8 MB of rows, in many commits: the log would pass SQLite's 1,000-page threshold several times.
    const text = "x".repeat(2_000);
    for (let batch = 0; batch < 40; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, index) => store!.createUser({ id: `u_${batch}_${index}`, username: `user${batch}x${index}`, email: `${text}@example.com`, isAdmin: false, createdAt: Date.now() })),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 800));
    // The next commit finds the log wholly copied and starts it over, cut back to its size limit.
    await store.createUser({ id: "u_last", username: "last", email: null, isAdmin: false, createdAt: Date.now() });
    const main = (await stat(file)).size;
    expect(main - mainBefore).toBeGreaterThan(4 * 1024 * 1024);
    expect((await stat(`${file}-wal`)).size).toBeLessThanOrEqual(16 * 1024 * 1024 + 64 * 1024);
    const inspector = new SqliteDatabase(file);
    try {
      const [log] = inspector.pragma("wal_checkpoint(PASSIVE)") as Array<{ log: number }>;
      expect(log!.log).toBeLessThan(50);
    } finally {
      inspector.close();
    }
    await store.close();
    store = createSqliteStore({ file });
    await store.migrate();
    expect(await store.countUsers()).toBe(4_001);
  });

  it("lets writes that read first wait for the log's restart rather than fail with SQLITE_BUSY", async () => {
    dir = await mkdtemp(join(tmpdir(), "runnel-wal-"));
    store = createSqliteStore({ file: join(dir, "runnel.sqlite") });
    await store.migrate();
    const body = { text: "y".repeat(4_000) };
    // Appends read the emitter's newest event before they write: under a steady stream of them, the log passes
    // its restart size several times, and each restart holds the write lock while appends are under way.
    const failures: unknown[] = [];
    let appended = 0;
    const until = performance.now() + 2_500;
    await Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        while (performance.now() < until) {
          try {
            const result = await store!.appendEvents({ ownerId: "u_1", emitterId: `dc_lane${lane}`, emits: Array.from({ length: 8 }, () => ({ event: body })), dedupe: null, retention: 200, now: Date.now() });
            appended += result.events.length;
          } catch (error) {
            failures.push(error);
          }
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(appended).toBeGreaterThan(1_000);
  });
});
