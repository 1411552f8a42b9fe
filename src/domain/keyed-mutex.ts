import { ChurningMap } from "./churning-map.js";

/**
 * Runs tasks one at a time per key, in arrival order, and different keys in
 * parallel. Invocations of one source go through it, so that two runs never
 * read the same key-value store snapshot and overwrite each other's writes.
 */
export class KeyedMutex {
  private readonly tails = new ChurningMap<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** True while a task of `key` runs or waits (and a moment after: the key is let go asynchronously). */
  isHeld(key: string): boolean {
    return this.tails.has(key);
  }

  /** Resolves when every task queued so far has finished. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values());
  }
}
