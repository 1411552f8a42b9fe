import type SqliteDatabase from "better-sqlite3";
import type { Kysely } from "kysely";
import { outsideKyselyTransaction } from "./sqlite-append.js";
import type { LogRestartTurns } from "./log-restart-turns.js";

/**
 * Group commit for the server's hot writes (appends, claims, run records): the
 * writes asked for while the thread is busy with one turn of the event loop
 * are carried out together, each in a savepoint of its own, in one
 * transaction. A commit costs about what twenty small inserts do (it writes
 * every page the transaction touched to the log, and with small batches the
 * same pages again and again), so under load, when many sources and
 * workflows each commit a few rows, one commit for all of them is most of
 * what the store costs. A write that fails rolls back its own savepoint
 * only; the others commit. Each caller is answered once the commit is done,
 * as before: nothing is acknowledged that is not durable.
 *
 * The wait is at most until the loop's check phase (setImmediate), after
 * the I/O that was ready in the same turn: the requests read together are
 * written together. While the checkpoint thread starts the log over, the
 * group waits a millisecond at a time with the event loop turning, rather
 * than on SQLite's busy handler, which sleeps on the thread
 * (log-restart-turns.ts); the writes asked for meanwhile join it.
 */
export class GroupCommit {
  private queue: Array<QueuedWrite> = [];
  private scheduled = false;
  private readonly begin: SqliteDatabase.Statement;
  private readonly commit: SqliteDatabase.Statement;
  private readonly rollback: SqliteDatabase.Statement;
  /** How long a group steps back for a restart before it begins anyway, on SQLite's busy handler: the connection's busy timeout. */
  private readonly patienceMs: number;
  /** When the group now stepping back first did (0: none does). */
  private steppedBackSince = 0;
  /** Transactions committed and writes carried out (how much grouping happens; the tests read it). */
  readonly stats = { commits: 0, writes: 0 };

  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly kysely: Kysely<any>,
    /** Turns with the checkpoint thread at the write lock; none for a store without it (in memory). */
    private readonly turns?: Pick<LogRestartTurns, "enter" | "leave">,
  ) {
    // IMMEDIATE: the transaction reads before it writes; see sqlite-append.ts.
    this.begin = database.prepare("BEGIN IMMEDIATE");
    this.commit = database.prepare("COMMIT");
    this.rollback = database.prepare("ROLLBACK");
    this.patienceMs = Number(database.pragma("busy_timeout", { simple: true }));
  }

  /** Whether the group may begin now: no restart under way, or one that has outlasted the group's patience. */
  private enterTurn(): "alone" | "in turn" | "later" {
    if (!this.turns) return "alone";
    if (this.turns.enter()) {
      this.steppedBackSince = 0;
      return "in turn";
    }
    const now = Date.now();
    if (this.steppedBackSince === 0) this.steppedBackSince = now;
    if (now - this.steppedBackSince < this.patienceMs) return "later";
    this.steppedBackSince = 0;
    return "alone";
  }

  /**
   * Carries out `write` in the next group. It must be a better-sqlite3
   * transaction function: called inside the group's transaction it becomes
   * a savepoint, undone alone when it throws.
   */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    let group: QueuedWrite[] | undefined;
    let outcomes: Outcome[] | undefined;
    try {
      outcomes = await outsideKyselyTransaction(this.database, this.kysely, () => {
        const turn = this.enterTurn();
        if (turn === "later") return undefined;
        try {
          // Taken only now: what was asked for while the log restarted goes in this group.
          group = this.takeQueue();
          return this.carryOut(group);
        } finally {
          if (turn === "in turn") this.turns!.leave();
        }
      });
    } catch (error) {
      // The transaction could not begin or commit: nothing of the group is stored.
      for (const queued of group ?? this.takeQueue()) queued.reject(error);
      return;
    }
    if (!outcomes) {
      // The checkpoint thread restarts the log: try again soon, still scheduled, so new writes join this group.
      setTimeout(() => void this.flush(), RESTART_RETRY_MS);
      return;
    }
    const written = group!;
    outcomes.forEach((outcome, index) => (outcome.ok ? written[index]!.resolve(outcome.value) : written[index]!.reject(outcome.error)));
  }

  private takeQueue(): QueuedWrite[] {
    const group = this.queue;
    this.queue = [];
    this.scheduled = false;
    return group;
  }

  private carryOut(group: QueuedWrite[]): Outcome[] {
    this.begin.run();
    const outcomes: Outcome[] = [];
    try {
      for (const { write } of group) {
        try {
          outcomes.push({ ok: true, value: write() });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      this.commit.run();
    } catch (error) {
      if (this.database.inTransaction) this.rollback.run();
      throw error;
    }
    this.stats.commits += 1;
    this.stats.writes += group.length;
    return outcomes;
  }
}

/** How soon a group that found the log restarting tries again: a restart takes a millisecond or a few. */
const RESTART_RETRY_MS = 1;

interface QueuedWrite {
  write: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
