/**
 * The server's thread and the checkpoint thread taking turns at the write
 * lock, so that the server's thread never sleeps on it.
 *
 * The checkpoint thread holds SQLite's write lock while it starts the log
 * over (wal-checkpointer.ts), a millisecond or a few, a few times a second
 * under load. A transaction the server's thread begins meanwhile meets
 * SQLite's busy handler, which sleeps 1, 2, 5, 10… ms on the one thread that
 * serves every request: each restart stopped the whole server for 1 to 8 ms.
 * Instead, the two threads say what they do in shared memory. The server's
 * group commit says it writes, then looks whether a restart is under way,
 * and if so steps back and tries again a millisecond later, its event loop
 * turning meanwhile; the checkpoint thread says it restarts, then waits
 * until the server's thread is not writing. Each says before it looks
 * (sequentially consistent atomics), so they are never both in: the lock
 * is only ever waited for by the checkpoint thread, for one short
 * transaction at most.
 *
 * Writes outside the group commit (Kysely's: the API's changes) still wait
 * on the busy handler; they are rare and short. A group that has stepped
 * back for as long as the busy handler would have waited (the connection's
 * busy timeout) begins anyway, on the busy handler: a restart that never
 * ends cannot hold the server's writes back forever.
 */

/** Slots of the shared Int32Array. */
export const WRITING = 0;
export const RESTARTING = 1;

export class LogRestartTurns {
  /** Shared with the checkpoint thread (workerData). */
  readonly buffer = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
  private readonly state = new Int32Array(this.buffer);

  /** The server's thread, before a group's transaction: true if it may write now, and then it must call `leave`. */
  enter(): boolean {
    Atomics.store(this.state, WRITING, 1);
    if (Atomics.load(this.state, RESTARTING) === 0) return true;
    this.leave();
    return false;
  }

  /** The server's thread, once the group's transaction is over (committed or not). */
  leave(): void {
    Atomics.store(this.state, WRITING, 0);
    Atomics.notify(this.state, WRITING);
  }

  /** The checkpoint thread is gone (failed, or ended mid-restart): no restart is under way, whatever it last said. */
  threadGone(): void {
    Atomics.store(this.state, RESTARTING, 0);
  }
}

/**
 * The checkpoint thread's side, as code for its eval'd CommonJS (it has no
 * file of its own): `restartWhenFree(state, restart)` runs `restart` once the
 * server's thread is not writing, and keeps it out until `restart` returns.
 */
export const RESTART_WHEN_FREE_CODE = `
function restartWhenFree(state, restart) {
  Atomics.store(state, ${RESTARTING}, 1);
  try {
    while (Atomics.load(state, ${WRITING}) === 1) Atomics.wait(state, ${WRITING}, 1, 5);
    return restart();
  } finally {
    Atomics.store(state, ${RESTARTING}, 0);
  }
}
`;
