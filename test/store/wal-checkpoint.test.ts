import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteDatabaseClass as SqliteDatabase } from "../../src/store/sqlite/sqlite-binding.js";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { waitFor } from "../helpers/test-cluster.js";

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
    // Only the thread checkpoints (the store's own connection never does): the main file grows with what it copies.
    // On a slow or busy machine that takes more than a moment, so it is waited for (bounded).
    const main = await waitFor(async () => (await stat(file)).size, (size) => size - mainBefore > 4 * 1024 * 1024, "the main file to grow by 4 MB", 20_000);
    expect(main - mainBefore).toBeGreaterThan(4 * 1024 * 1024);
    // Once the log is wholly copied (by the thread, or by the inspector's passive checkpoints below), the next commit
    // writes from its start: one small commit at a time until it has (bounded).
    const inspector = new SqliteDatabase(file);
    let extra = 0;
    let logFrames = Infinity;
    try {
      for (const deadline = Date.now() + 20_000; logFrames >= 50 && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await store.createUser({ id: `u_last${extra}`, username: `last${extra}`, email: null, isAdmin: false, createdAt: Date.now() });
        extra += 1;
        logFrames = (inspector.pragma("wal_checkpoint(PASSIVE)") as Array<{ log: number }>)[0]!.log;
      }
    } finally {
      inspector.close();
    }
    expect(logFrames).toBeLessThan(50);
    // The log file is reused as it is up to twice a restart's worth (16 MB), and cut past it (wal-checkpointer.ts):
    // a burst on a slow machine may leave a file between the two, by design, or past it until the thread's next look.
    const limit = 32 * 1024 * 1024 + 64 * 1024;
    const logFile = await waitFor(async () => (await stat(`${file}-wal`)).size, (size) => size <= limit, "the log file to be cut to 32 MB or less", 20_000);
    expect(logFile).toBeLessThanOrEqual(limit);
    await store.close();
    store = createSqliteStore({ file });
    await store.migrate();
    expect(await store.countUsers()).toBe(4_000 + extra);
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
