/**
 * The host's side of a runner's journal (runner/journal.ts): the file it
 * gives the runner at JOURNAL_FD, in the runner's own folder, and what of it
 * the channel did not bring when the runner is gone with calls unfinished.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { JOURNAL_MAX_BYTES, readJournalEntry, unreceived } from "./runner/journal.js";

const JOURNAL_FILE = "journal";

export class RunnerJournal {
  private constructor(
    private readonly path: string,
    /** Open until the runner has its own copy (closeDescriptor). */
    private descriptor: number | undefined,
  ) {}

  /** A new, empty journal in the runner's folder `dir`. */
  static create(dir: string): RunnerJournal {
    const path = join(dir, JOURNAL_FILE);
    return new RunnerJournal(path, openSync(path, "w+", 0o600));
  }

  /** The descriptor to give the child, at JOURNAL_FD. */
  get fd(): number {
    if (this.descriptor === undefined) throw new Error("the journal's descriptor was already handed over");
    return this.descriptor;
  }

  /** Once the child is spawned (it has its own), or failed to be. */
  closeDescriptor(): void {
    if (this.descriptor === undefined) return;
    closeSync(this.descriptor);
    this.descriptor = undefined;
  }

  /**
   * What the runner journaled that the host did not receive, having read
   * `received` bytes of the channel (to its end: the runner is gone), or
   * null. Read whole only when it is an entry of a size the runner writes;
   * anything else (the runner's code can write the file) is nothing.
   */
  unreceived(received: number): ReturnType<typeof unreceived> {
    let fd: number | undefined;
    try {
      fd = openSync(this.path, "r");
      const size = fstatSync(fd).size;
      if (size === 0 || size > JOURNAL_MAX_BYTES) return null;
      const contents = Buffer.allocUnsafe(size);
      const read = readSync(fd, contents, 0, size, 0);
      const entry = readJournalEntry(contents.subarray(0, read));
      return entry ? unreceived(entry, received) : null;
    } catch {
      return null;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
