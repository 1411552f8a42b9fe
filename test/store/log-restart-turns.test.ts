import type SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";
import { LogRestartTurns, RESTART_WHEN_FREE_CODE } from "../../src/store/sqlite/log-restart-turns.js";
import { SqliteDatabaseClass, sqliteModulePath } from "../../src/store/sqlite/sqlite-binding.js";

/**
 * The checkpoint thread's log restart and the server's group commit take
 * turns at SQLite's write lock: the server's thread never sleeps on it. A
 * real thread stands in for the checkpoint thread: it holds the write lock
 * (another connection's transaction, as a restart does) for as long as told.
 */
const STAND_IN = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const database = new Database(workerData.file);
database.pragma("busy_timeout = 5000");
const turns = new Int32Array(workerData.turns);
const released = new Int32Array(workerData.released);
${RESTART_WHEN_FREE_CODE}
parentPort.on("message", (holdMs) => {
  restartWhenFree(turns, () => {
    database.exec("BEGIN IMMEDIATE");
    parentPort.postMessage("locked");
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, holdMs);
    database.exec("COMMIT");
    Atomics.add(released, 0, 1);
  });
  parentPort.postMessage("done");
});
`;

describe("log restarts in turns with the group commit", () => {
  let dir: string;
  let database: SqliteDatabase.Database;
  let kysely: Kysely<any>;
  let turns: LogRestartTurns;
  let thread: Worker;
  /** How many times the stand-in has released the write lock: shared memory, so it is read without a message's delay. */
  let released: Int32Array;
  const messages: string[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "runnel-restart-turns-"));
    const file = join(dir, "db.sqlite");
    database = new SqliteDatabaseClass(file);
    database.pragma("journal_mode = WAL");
    database.pragma("busy_timeout = 5000");
    database.exec("CREATE TABLE items (name TEXT PRIMARY KEY)");
    kysely = new Kysely({ dialect: new SqliteDialect({ database }) });
    turns = new LogRestartTurns();
    messages.length = 0;
    released = new Int32Array(new SharedArrayBuffer(4));
    thread = new Worker(STAND_IN, {
      eval: true,
      workerData: { file, module: sqliteModulePath, turns: turns.buffer, released: released.buffer },
    });
    thread.on("message", (message: string) => messages.push(message));
  });
  afterEach(async () => {
    await thread.terminate();
    await kysely.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  const insert = (name: string) => database.transaction(() => database.prepare("INSERT INTO items (name) VALUES (?)").run(name).changes);
  const names = () => database.prepare("SELECT name FROM items ORDER BY name").pluck().all();
  const message = async (wanted: string) => {
    while (!messages.includes(wanted)) await once(thread, "message");
  };

  it("waits for a restart in progress with the event loop turning, then commits what was asked meanwhile together", async () => {
    const group = new GroupCommit(database, kysely, turns);
    // Long enough that both writes are asked for while it lasts, even on a starved machine.
    thread.postMessage(500);
    await message("locked");
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 2);
    // What the stand-in had released when each write ran, read at that moment
    // (its "done" message may arrive after the group has committed).
    const releasedAtWrite: number[] = [];
    const insertAfterRestart = (name: string) => () => {
      releasedAtWrite.push(Atomics.load(released, 0));
      return insert(name)();
    };
    try {
      const first = group.run(insertAfterRestart("a"));
      await new Promise((resolve) => setTimeout(resolve, 30));
      const second = group.run(insertAfterRestart("b"));
      expect(await Promise.all([first, second])).toEqual([1, 1]);
    } finally {
      clearInterval(ticker);
    }
    expect(releasedAtWrite).toEqual([1, 1]);
    // On SQLite's busy handler, the thread would have slept through the restart: no tick at all.
    expect(ticks).toBeGreaterThanOrEqual(20);
    expect(group.stats).toEqual({ commits: 1, writes: 2 });
    expect(names()).toEqual(["a", "b"]);
  });

  it("holds a restart back while the server's thread writes", async () => {
    expect(turns.enter()).toBe(true);
    thread.postMessage(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(messages).toEqual([]);
    turns.leave();
    await message("done");
    expect(messages).toEqual(["locked", "done"]);
    // The restart over, the server's thread may write again.
    expect(turns.enter()).toBe(true);
    turns.leave();
  });

  it("tells the server's thread to step back while a restart holds the lock", async () => {
    thread.postMessage(100);
    await message("locked");
    expect(turns.enter()).toBe(false);
    await message("done");
    expect(turns.enter()).toBe(true);
    turns.leave();
  });

  it("forgets a restart the checkpoint thread could not finish, once it is gone", async () => {
    thread.postMessage(60_000);
    await message("locked");
    await thread.terminate();
    // Ended mid-restart: nothing cleared its flag.
    expect(turns.enter()).toBe(false);
    turns.threadGone();
    expect(turns.enter()).toBe(true);
    turns.leave();
  });

  it("begins anyway after stepping back for as long as the busy timeout, if a restart never says it is over", async () => {
    database.pragma("busy_timeout = 150");
    const stuck = { enter: () => false, leave: () => undefined };
    const group = new GroupCommit(database, kysely, stuck);
    const started = Date.now();
    expect(await group.run(insert("late"))).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(names()).toEqual(["late"]);
    // Its patience starts over with the next group.
    const next = Date.now();
    expect(await group.run(insert("later"))).toBe(1);
    expect(Date.now() - next).toBeGreaterThanOrEqual(150);
  });
});
