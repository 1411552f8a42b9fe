import type SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";
import { SqliteDatabaseClass } from "../../src/store/sqlite/sqlite-binding.js";

/**
 * The SQLite store's group commit: writes asked for in one turn of the event
 * loop share one transaction, each in a savepoint of its own; a write that
 * throws is undone alone; a transaction that cannot commit fails them all
 * and stores nothing of them.
 */
describe("SQLite group commit", () => {
  let dir: string;
  let database: SqliteDatabase.Database;
  let kysely: Kysely<any>;
  let group: GroupCommit;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "runnel-group-commit-"));
    database = new SqliteDatabaseClass(join(dir, "db.sqlite"));
    database.pragma("journal_mode = WAL");
    database.exec("CREATE TABLE items (name TEXT PRIMARY KEY)");
    kysely = new Kysely({ dialect: new SqliteDialect({ database }) });
    group = new GroupCommit(database, kysely);
  });
  afterEach(async () => {
    await kysely.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  const insert = (name: string) => database.transaction(() => database.prepare("INSERT INTO items (name) VALUES (?)").run(name).changes);
  const names = () => database.prepare("SELECT name FROM items ORDER BY name").pluck().all();

  it("commits the writes of one turn together, each answered with its own result", async () => {
    const answers = await Promise.all([group.run(insert("a")), group.run(insert("b")), group.run(insert("c"))]);
    expect(answers).toEqual([1, 1, 1]);
    expect(group.stats).toEqual({ commits: 1, writes: 3 });
    expect(names()).toEqual(["a", "b", "c"]);
    // A write of a later turn is a transaction of its own.
    await group.run(insert("d"));
    expect(group.stats).toEqual({ commits: 2, writes: 4 });
  });

  it("undoes only the write that threw; the others of its group are stored", async () => {
    const failing = database.transaction(() => {
      database.prepare("INSERT INTO items (name) VALUES (?)").run("half-written");
      throw new Error("the write failed after its first insert");
    });
    const [first, second, third] = await Promise.allSettled([group.run(insert("a")), group.run(failing), group.run(insert("b"))]);
    expect(first).toEqual({ status: "fulfilled", value: 1 });
    expect(second).toMatchObject({ status: "rejected", reason: { message: "the write failed after its first insert" } });
    expect(third).toEqual({ status: "fulfilled", value: 1 });
    expect(names()).toEqual(["a", "b"]);
    // The same key again fails that write alone, as its constraint says.
    const [again, other] = await Promise.allSettled([group.run(insert("a")), group.run(insert("c"))]);
    expect(again).toMatchObject({ status: "rejected", reason: { code: "SQLITE_CONSTRAINT_PRIMARYKEY" } });
    expect(other).toEqual({ status: "fulfilled", value: 1 });
    expect(names()).toEqual(["a", "b", "c"]);
  });

  it("fails every write of a group whose transaction cannot begin, and stores none of them", async () => {
    // Another connection holds the write lock, and this one does not wait for it.
    const other = new SqliteDatabaseClass(join(dir, "db.sqlite"));
    database.pragma("busy_timeout = 0");
    other.exec("BEGIN IMMEDIATE");
    try {
      const settled = await Promise.allSettled([group.run(insert("a")), group.run(insert("b"))]);
      expect(settled.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
      expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_BUSY" });
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(database.inTransaction).toBe(false);
    expect(names()).toEqual([]);
    // The lock gone, the next group commits.
    await group.run(insert("c"));
    expect(names()).toEqual(["c"]);
  });

  it("waits for a Kysely transaction in progress rather than writing inside it", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = kysely.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ name: "in-kysely" }).execute();
      await held;
      throw new Error("rolled back");
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const write = group.run(insert("grouped"));
    release();
    await expect(transaction).rejects.toThrow("rolled back");
    expect(await write).toBe(1);
    // The Kysely transaction's rollback did not take the grouped write with it.
    expect(names()).toEqual(["grouped"]);
  });
});
