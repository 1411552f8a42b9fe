/**
 * Checkpoints the SQLite write-ahead log from a thread of its own.
 *
 * By default SQLite checkpoints inside the commit that takes the log past
 * 1,000 pages: that commit copies the pages into the database file and
 * syncs it, on the server's one JavaScript thread, while every request
 * waits. Measured on the workflow bench, those in-line checkpoints cost a
 * fifth of the server's throughput. So the server's connection never
 * checkpoints (wal_autocheckpoint = 0), and a worker thread with a
 * connection of its own runs a PASSIVE checkpoint (it never blocks the
 * writer, nor waits for it) five times a second, on another core; past
 * 16 MB of log it restarts the log, which takes the write lock: in turns
 * with the server's group commit (log-restart-turns.ts), so that the
 * server's thread never sleeps on it. A log file a burst grew past 32 MB is
 * cut to nothing by the thread too, in the same turns, whether or not the log
 * in it is long.
 *
 * Durability is unchanged: a commit is in the log before it is answered,
 * as before; the checkpoint only moves it into the main file. If the thread
 * fails, the server's connection checkpoints for itself again, so the log
 * never grows without bound.
 */
import { Worker } from "node:worker_threads";
import type SqliteDatabase from "better-sqlite3";
import type { Logger } from "pino";
import { sqliteModulePath } from "./sqlite-binding.js";
import { LogRestartTurns, RESTART_WHEN_FREE_CODE } from "./log-restart-turns.js";

/** How often the thread checkpoints: the log stays small (a checkpoint of an empty log costs nothing). */
const CHECKPOINT_EVERY_MS = 200;
/** Pages (4 KB) in the log past which it is started over (see THREAD_CODE): about 16 MB. */
const RESTART_PAGES = 4_000;
/**
 * The log file's size past which the thread, when it restarts the log, cuts
 * the file to nothing as well (`wal_checkpoint(TRUNCATE)`): twice a
 * restart's worth, so that a file a burst of writes grew is given back,
 * while the usual one (a little over 16 MB: 4,000 pages and their frames'
 * headers) is reused as it is. Until session 29 SQLite cut it back itself
 * (`journal_size_limit` at 16 MB), in the commit that started the log over,
 * on the server's thread: every restart cut the file's last pages, a 6-8 ms
 * stall every 430 ms at 2,800 workflow runs/s (the p99 at that rate went
 * from 11.1 to 5.2 ms without it). Cut here, it happens in the thread, in
 * turns with the group commit like the restart itself.
 */
const LOG_FILE_LIMIT_BYTES = 2 * RESTART_PAGES * 4096;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1_000;
/** A checkpoint in progress when the store closes may finish; past this, the thread is ended. */
const STOP_GRACE_MS = 5_000;

/** The thread's code: CommonJS, evaluated (the thread needs no file of its own, which a server run from source would not have). */
const THREAD_CODE = `
const { parentPort, workerData } = require("node:worker_threads");
const { statSync } = require("node:fs");
const Database = require(workerData.module);
const database = new Database(workerData.file);
database.pragma("busy_timeout = 5000");
const turns = new Int32Array(workerData.turns);
${RESTART_WHEN_FREE_CODE}
let timer;
const checkpoint = () => {
  try {
    const [passive] = database.pragma("wal_checkpoint(PASSIVE)");
    // Under steady writes a passive checkpoint never finds the log wholly copied between two commits, and
    // the log is reused only then: past the limit, a RESTART waits for the writer's commit in progress,
    // copies what little the passive one left, and has the next commit start the log over.
    // It takes the write lock: in turns with the server's group commit (log-restart-turns.ts), which never sleeps on it.
    // A log file a burst grew past the limit is cut to nothing (TRUNCATE), here, not in a commit on the server's thread,
    // and even when the log in it is short: once a passive checkpoint has copied a whole log, SQLite's next commit
    // starts it over by itself, and the file would keep the size the burst gave it.
    const oversized = logFileBytes() > workerData.logFileLimit;
    if (passive && (passive.log > workerData.restartPages || oversized)) {
      restartWhenFree(turns, () => database.pragma("wal_checkpoint(" + (oversized ? "TRUNCATE" : "RESTART") + ")"));
    }
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
  timer = setTimeout(checkpoint, workerData.every);
};
function logFileBytes() {
  try {
    return statSync(workerData.file + "-wal").size;
  } catch {
    return 0;
  }
}
parentPort.on("message", () => {
  clearTimeout(timer);
  database.close();
  parentPort.close();
});
checkpoint();
`;

export class WalCheckpointer {
  private readonly worker: Worker;
  private stopped = false;
  /** What the server's group commit asks before it writes (log-restart-turns.ts). */
  readonly turns = new LogRestartTurns();

  constructor(
    private readonly database: SqliteDatabase.Database,
    file: string,
    private readonly logger?: Logger,
  ) {
    database.pragma("wal_autocheckpoint = 0");
    // The thread cuts a log file grown past LOG_FILE_LIMIT_BYTES; SQLite never cuts it in a commit (-1: no limit).
    database.pragma("journal_size_limit = -1");
    // The thread loads the same build of better-sqlite3 as this one (see sqlite-binding.ts).
    this.worker = new Worker(THREAD_CODE, { eval: true, workerData: { file, module: sqliteModulePath, every: CHECKPOINT_EVERY_MS, restartPages: RESTART_PAGES, logFileLimit: LOG_FILE_LIMIT_BYTES, turns: this.turns.buffer } });
    // The thread must not keep a server that is otherwise done from exiting.
    this.worker.unref();
    this.worker.on("message", (message: { error?: string }) => {
      if (message.error) this.logger?.warn({ reason: message.error }, "store: a checkpoint of the SQLite log failed; the next one tries again");
    });
    this.worker.on("error", (error) => this.fallBack(error));
    this.worker.on("exit", (code) => {
      if (!this.stopped) this.fallBack(new Error(`the checkpoint thread exited with code ${code}`));
    });
  }

  /** Stops the thread and waits for it; the server's connection, closed last, checkpoints what is left. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    // Held again while it stops: a process with nothing else left to do must wait for it, not exit mid-close.
    this.worker.ref();
    this.worker.postMessage("stop");
    const stuck = setTimeout(() => void this.worker.terminate(), STOP_GRACE_MS);
    await exited;
    clearTimeout(stuck);
    // Ended in the middle of a restart, it could not say it was over.
    this.turns.threadGone();
  }

  /** The thread is gone: the server's connection checkpoints for itself again. */
  private fallBack(error: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    this.turns.threadGone();
    this.logger?.error({ err: error }, "store: the SQLite checkpoint thread failed; the server checkpoints in its own commits again (slower)");
    try {
      this.database.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
      // Nobody cuts a grown log file any more: SQLite does, in the commit that starts the log over.
      this.database.pragma(`journal_size_limit = ${LOG_FILE_LIMIT_BYTES}`);
    } catch {
      // The database is closing: nothing to checkpoint for.
    }
  }
}
